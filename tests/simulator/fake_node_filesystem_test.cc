// The in-memory node behaves as the kernel does where kubelet's rules
// depend on it, so that the rule tests cannot pass on a fake that is
// kinder than Linux.
#include "simulator/fake_node_filesystem.h"

#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <functional>

#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

class SimulatorFakeNodeFilesystem : public ::testing::Test {
 protected:
  int CodeOf(const std::function<void()>& op) {
    try {
      op();
    } catch (const FilesystemError& e) {
      return e.code();
    }
    return 0;
  }
  flexkit::testing::TempDir run_{"flexsim-fake-fs"};
  std::unique_ptr<Node> node_ = FakeNodeFilesystem::MakeNode("n", run_.path());
  FakeNodeFilesystem& fs_ = FakeNodeFilesystem::Of(*node_);
};

TEST_F(SimulatorFakeNodeFilesystem, ErrorsCarryTheKernelsErrno) {
  fs_.MakeDirs("/a/b", 0750);
  fs_.MakeDirs("/dev-dir", 0750);
  fs_.WriteFile("/a/b/f", "x");
  EXPECT_EQ(CodeOf([&] { fs_.RemoveDir("/a/b"); }), ENOTEMPTY);
  EXPECT_EQ(CodeOf([&] { fs_.RemoveDir("/missing"); }), ENOENT);
  EXPECT_EQ(CodeOf([&] { fs_.Unmount("/a"); }), EINVAL);
  EXPECT_EQ(CodeOf([&] { fs_.Mount("/dev/x", "/nowhere", "ext4", 0, ""); }), ENOENT);
  fs_.Mount("/dev/x", "/dev-dir", "ext4", 0, "");
  EXPECT_EQ(CodeOf([&] { fs_.RemoveDir("/dev-dir"); }), EBUSY);
  fs_.InjectError("unmount", "/dev-dir", EBUSY);
  EXPECT_EQ(CodeOf([&] { fs_.Unmount("/dev-dir"); }), EBUSY);
  EXPECT_EQ(CodeOf([&] { fs_.Unmount("/dev-dir"); }), 0);  // injected once
  node_->Crash();
  EXPECT_EQ(CodeOf([&] { fs_.PathExists("/a"); }), ENXIO);
}

TEST_F(SimulatorFakeNodeFilesystem, MountsShowTheirSourceAndVanishWithTheNamespace) {
  fs_.MakeDirs("/global", 0750);
  fs_.MakeDirs("/pod", 0750);
  fs_.WriteFile("/pod/hidden", "under the mount");
  fs_.Mount("/dev/x", "/global", "ext4", 0, "");
  EXPECT_TRUE(fs_.ListDir("/global").empty());  // the device's own (empty) root
  fs_.Mount("/global", "/pod", "", MS_BIND, "");
  fs_.Mount("/global", "/pod", "", MS_BIND | MS_REMOUNT | MS_RDONLY, "");
  EXPECT_EQ(CodeOf([&] { fs_.WriteFile("/pod/f", "x"); }), EROFS);
  fs_.WriteFile("/global/f", "on the device");
  EXPECT_EQ(fs_.ReadFile("/pod/f"), "on the device");
  EXPECT_EQ(fs_.Mounts().size(), 2u);
  EXPECT_EQ(fs_.Mounts().back().source, "/dev/x");
  node_->Restart();
  EXPECT_TRUE(fs_.Mounts().empty());
  EXPECT_EQ(fs_.ReadFile("/pod/hidden"), "under the mount");
  fs_.Mount("/dev/x", "/global", "ext4", 0, "");
  EXPECT_EQ(fs_.ReadFile("/global/f"), "on the device");  // the device kept it
}

}  // namespace
}  // namespace flexkit::sim
