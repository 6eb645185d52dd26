#include "driver/convoy/devices.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

TEST(SystemDevices, ADirectoryIsAVfsDeviceAndAPlainFileIsNoDevice) {
  flexkit::testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  SystemDevices devices;
  EXPECT_TRUE(devices.Exists(dir.path()));
  EXPECT_FALSE(devices.Exists(dir.path() + "/file"));
  EXPECT_FALSE(devices.Exists(dir.path() + "/missing"));
}

}  // namespace
}  // namespace convoy_flexvolume
