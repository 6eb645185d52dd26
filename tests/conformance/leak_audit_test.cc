// The host half of the leak audit on a real loop device (needs root): a
// loop device left over a file of the run dir is found even when the run
// dir is named through a symlink and after the case dir was removed.
#include "conformance/leak_audit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;
using flexkit::testing::RunProcess;

TEST(LeakAudit, FindsALoopDeviceWhoseBackingFileWasDeleted) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("leak-audit");
  fs::create_directories(dir.Join("real/run/1"));
  fs::create_directory_symlink(dir.Join("real"), dir.Join("link"));
  const std::string run_dir = dir.Join("link/run");
  const std::string file = run_dir + "/1/vol.img";
  std::ofstream(file).close();
  fs::resize_file(file, 1 << 20);

  const HostSnapshot before = TakeHostSnapshot(run_dir);
  auto attached = RunProcess({"/usr/sbin/losetup", "--find", "--show", file});
  ASSERT_EQ(attached.exit_code, 0) << attached.err;
  const std::string loop = attached.out.substr(0, attached.out.find('\n'));
  fs::remove_all(run_dir + "/1");  // as the runner removes a case dir
  const auto leaks = CompareHost(before, TakeHostSnapshot(run_dir));
  const auto found = LoopDevicesUnder(run_dir);
  RunProcess({"/usr/sbin/losetup", "--detach", loop});

  ASSERT_EQ(leaks.size(), 1u) << ::testing::PrintToString(leaks);
  EXPECT_NE(leaks[0].find("loop device left"), std::string::npos) << leaks[0];
  EXPECT_NE(leaks[0].find("(deleted)"), std::string::npos) << leaks[0];
  EXPECT_EQ(found, std::vector<std::string>{loop});
}

}  // namespace
}  // namespace flexkit::conform
