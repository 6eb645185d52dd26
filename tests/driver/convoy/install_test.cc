#include "driver/convoy/install.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Install, WritesMode0755ReinstallsOnChangeAndLeavesNoTempFile) {
  flexkit::testing::TempDir dir;
  const std::string src = dir.Join("src");
  std::ofstream(src) << "#!/bin/sh\necho v1\n";
  const std::string plugins = dir.Join("plugins");
  std::filesystem::create_directories(plugins);
  EXPECT_EQ(InstallDriver(src, plugins, "rancher.io~convoy", "convoy"), InstallResult::kInstalled);
  const std::string target = plugins + "/rancher.io~convoy/convoy";
  EXPECT_EQ(Read(target), "#!/bin/sh\necho v1\n");
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_EQ(InstallDriver(src, plugins, "rancher.io~convoy", "convoy"),
            InstallResult::kAlreadyInstalled);
  std::ofstream(src) << "#!/bin/sh\necho v2\n";
  EXPECT_EQ(InstallDriver(src, plugins, "rancher.io~convoy", "convoy"), InstallResult::kInstalled);
  EXPECT_EQ(Read(target), "#!/bin/sh\necho v2\n");
  // No temporary dot-file is left for the prober to trip over.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(plugins + "/rancher.io~convoy")) {
    EXPECT_EQ(e.path().filename(), "convoy");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// kubelet's plugin dir exists once kubelet has started: a missing one is a
// mistyped path or the wrong host, and nothing is created.
TEST(Install, AMissingPluginDirSaysSoAndCreatesNothing) {
  flexkit::testing::TempDir dir;
  const std::string src = dir.Join("src");
  std::ofstream(src) << "#!/bin/sh\n";
  try {
    InstallDriver(src, dir.Join("no/such/plugins"), "rancher.io~convoy", "convoy");
    ADD_FAILURE() << "installed into a missing plugin dir";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.Join("no")));
}

TEST(Install, MissingSourceSaysSo) {
  flexkit::testing::TempDir dir;
  try {
    InstallDriver(dir.Join("nope"), dir.Join("plugins"), "rancher.io~convoy", "convoy");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.Join("nope")), std::string::npos);
  }
}

TEST(Install, TheBinaryInstallsItselfAndRuns) {
  flexkit::testing::TempDir dir;
  const std::string binary = flexkit::testing::BuiltBinary("driver/convoy-flexvolume");
  auto r = flexkit::testing::RunProcess({binary, "install", "--plugin-dir", dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("installed"), std::string::npos);
  r = flexkit::testing::RunProcess({binary, "install", "--plugin-dir", dir.path()});
  EXPECT_NE(r.out.find("already installed"), std::string::npos);
  auto init = flexkit::testing::RunProcess({dir.path() + "/rancher.io~convoy/convoy", "init"});
  EXPECT_EQ(init.exit_code, 0);
  EXPECT_NE(init.out.find("\"attach\":true"), std::string::npos);
  auto usage = flexkit::testing::RunProcess({binary, "install"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--plugin-dir DIR is required"), std::string::npos);
}

}  // namespace
}  // namespace convoy_flexvolume
