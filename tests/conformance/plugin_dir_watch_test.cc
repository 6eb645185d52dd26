#include "conformance/plugin_dir_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace {

using flexkit::conform::PluginDirWatch;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class PluginDirWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir.Join("vendor~drv/state"));
    std::ofstream(dir.Join("vendor~drv/drv")) << "#!/bin/sh\n";
  }
  std::string Drv(const std::string& rel) { return dir.Join("vendor~drv/" + rel); }
  flexkit::testing::TempDir dir;
};

TEST_F(PluginDirWatchTest, ReadingTheExecutableIsNoChange) {
  PluginDirWatch watch(Drv(""));
  std::ifstream in(Drv("drv"));
  std::string line;
  std::getline(in, line);
  EXPECT_THAT(watch.Changes(), IsEmpty());
  EXPECT_EQ(watch.error(), "");
}

TEST_F(PluginDirWatchTest, AnAppendedLogIsAChange) {
  std::ofstream(Drv("drv.log")) << "first\n";
  PluginDirWatch watch(Drv(""));
  std::ofstream(Drv("drv.log"), std::ios::app) << "mount called\n";
  auto changes = watch.Changes();
  ASSERT_FALSE(changes.empty());
  EXPECT_THAT(changes.front(), HasSubstr("vendor~drv/drv.log (written)"));
  EXPECT_THAT(watch.Changes(), IsEmpty()) << "each change is reported once";
}

TEST_F(PluginDirWatchTest, ChangesInSubdirectoriesCountAsTheProberWatchesThemToo) {
  PluginDirWatch watch(Drv(""));
  std::ofstream(Drv("state/vol-1.json")) << "{}";
  auto changes = watch.Changes();
  ASSERT_FALSE(changes.empty());
  EXPECT_THAT(changes.front(), HasSubstr("state/vol-1.json (created)"));
}

TEST_F(PluginDirWatchTest, DotNamesAreIgnoredLikeTheProberDoes) {
  PluginDirWatch watch(Drv(""));
  std::ofstream(Drv(".drv.tmp")) << "new version";
  std::filesystem::remove(Drv(".drv.tmp"));
  EXPECT_THAT(watch.Changes(), IsEmpty());
}

TEST_F(PluginDirWatchTest, ChmodOfTheExecutableIsAChange) {
  PluginDirWatch watch(Drv(""));
  ::chmod(Drv("drv").c_str(), 0755);
  EXPECT_THAT(watch.Changes(), ElementsAre(HasSubstr("vendor~drv/drv (chmod)")));
}

TEST_F(PluginDirWatchTest, TheUnwatchedDirectoryIsLeftOut) {
  std::filesystem::create_directories(Drv("runs/flexconform-1"));
  PluginDirWatch watch(Drv(""), Drv("runs"));
  std::ofstream(Drv("runs/flexconform-1/daemon.log")) << "x";
  std::filesystem::create_directories(Drv("runs/flexconform-2"));
  EXPECT_THAT(watch.Changes(), IsEmpty());
  std::ofstream(Drv("state/vol.json")) << "{}";
  auto changes = watch.Changes();
  ASSERT_FALSE(changes.empty());
  EXPECT_THAT(changes.front(), HasSubstr("state/vol.json (created)"));
}

TEST_F(PluginDirWatchTest, AMissingFolderSaysWhy) {
  PluginDirWatch watch(dir.Join("absent"));
  EXPECT_THAT(watch.error(), HasSubstr("absent"));
  EXPECT_THAT(watch.Changes(), IsEmpty());
}

}  // namespace
