// kubelet's own unmount as case_context.h promises it: a transient EBUSY is
// retried, any other error is thrown at once. On a fake node (no root).
#include "conformance/case_context.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "simulator/fake_node_filesystem.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

class KubeletUnmountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = sim::FakeNodeFilesystem::MakeNode("node-1", dir_.path());
    fs().MakeDirs("/pod", 0750);
    fs().Mount("tmpfs", "/pod", "tmpfs", 0, "");
  }
  sim::FakeNodeFilesystem& fs() { return sim::FakeNodeFilesystem::Of(*node_); }
  int Unmounts() const {
    int n = 0;
    for (const auto& op : sim::FakeNodeFilesystem::Of(*node_).operations())
      n += op.rfind("unmount ", 0) == 0 ? 1 : 0;
    return n;
  }
  flexkit::testing::TempDir dir_{"kubelet-unmount"};
  std::unique_ptr<sim::Node> node_;
};

TEST_F(KubeletUnmountTest, ATransientEbusyIsRetriedUntilTheUnmountGoesThrough) {
  fs().InjectError("unmount", "/pod", EBUSY, 2);
  KubeletUnmount(*node_, "/pod");
  EXPECT_FALSE(fs().IsMountPoint("/pod"));
  EXPECT_EQ(Unmounts(), 3);
}

TEST_F(KubeletUnmountTest, AnyOtherErrorIsThrownAtOnce) {
  fs().InjectError("unmount", "/pod", EIO, 1);
  try {
    KubeletUnmount(*node_, "/pod");
    ADD_FAILURE() << "EIO must not be swallowed";
  } catch (const sim::FilesystemError& e) {
    EXPECT_EQ(e.code(), EIO);
  }
  EXPECT_EQ(Unmounts(), 1) << "EIO is not retried";
  EXPECT_TRUE(fs().IsMountPoint("/pod"));
}

}  // namespace
}  // namespace flexkit::conform
