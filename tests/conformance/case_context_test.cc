// kubelet's own unmount as case_context.h promises it: a transient EBUSY is
// retried, any other error is thrown at once (on a fake node, no root);
// a case's nodes are the ones it declares, up to the profile's.
#include "conformance/case_context.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "conformance/fixture.h"
#include "simulator/boost_process_runner.h"
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

// A node no call reaches is not made: one case of --driver's two-node
// profile runs on node-1 alone, a node it did not declare is the
// harness's error, and a profile of one node makes a two-node case SKIP.
TEST(CaseContextNodes, ACaseGetsTheNodesItDeclaresUpToTheProfiles) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("case-nodes");
  DriverProfile profile;
  profile.driver = "/bin/true";
  profile.driver_name = "flexconform/true";
  profile.nodes = 2;
  auto fixture = MakeFixture(profile.fixture, dir.path());
  sim::BoostProcessRunner runner;
  {
    CaseContext one(profile, dir.Join("1"), "r1c1", 1, *fixture, runner, 1);
    EXPECT_EQ(one.node_count(), 1u);
    EXPECT_TRUE(std::filesystem::exists(dir.Join("1/nodes/node-1")));
    EXPECT_FALSE(std::filesystem::exists(dir.Join("1/nodes/node-2")));
    EXPECT_THROW(one.node(1), std::logic_error);
  }
  {
    CaseContext two(profile, dir.Join("2"), "r1c2", 1, *fixture, runner, 2);
    EXPECT_EQ(two.node_count(), 2u);
    EXPECT_EQ(two.node(1).name(), "node-2");
  }
  profile.nodes = 1;
  CaseContext capped(profile, dir.Join("3"), "r1c3", 1, *fixture, runner, 2);
  EXPECT_EQ(capped.node_count(), 1u);
  EXPECT_THROW(capped.node(1), CaseSkip);
}

}  // namespace
}  // namespace flexkit::conform
