// kubelet's own unmount as case_context.h promises it: a transient EBUSY is
// retried, any other error is thrown at once (on a fake node, no root);
// a case's nodes are the ones it declares, up to the profile's; a
// controller's call runs with the control plane's hostname and PATH, and
// an undecodable reply there is blamed on the PATH only when the shell
// found no command.
#include "conformance/case_context.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
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

std::vector<std::string> Rules(const CaseContext& c) {
  std::vector<std::string> rules;
  for (const auto& f : c.findings()) rules.push_back(f.rule);
  return rules;
}

// control_plane() runs the controller's verbs with the control plane's
// hostname and (only there) its empty PATH, its per-call findings as warnings:
// the one finding about the controller's tools belongs to its own case. ops()
// runs them with the control plane's hostname and the node's PATH.
TEST(CaseContextControlPlane, ACallSeesItsHostnameAndTheControlPlanePathOnlyWarns) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("case-control-plane");
  const std::string driver = dir.Join("driver");
  // Builtins only, but for attach's jq; detach's backend chatters on stderr.
  std::ofstream(driver) << "#!/bin/sh\n"
                           "case \"$1\" in\n"
                           "  init) printf '{\"status\":\"Success\",\"capabilities\":"
                           "{\"attach\":true}}\\n' ;;\n"
                           "  isattached) read -r h < /proc/sys/kernel/hostname\n"
                           "    printf '{\"status\":\"Failure\",\"message\":\"%s\"}\\n' \"$h\"; "
                           "exit 1 ;;\n"
                           "  attach) jq -n '{status: \"Success\"}' ;;\n"
                           "  detach) echo '  Failed to find logical volume' >&2\n"
                           "    printf '{\"status\":\"Success\"}\\n' ;;\n"
                           "esac\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  DriverProfile profile;
  profile.driver = driver;
  profile.driver_name = "flexconform/driver";
  profile.capabilities = sim::DriverCapabilities{};
  profile.capabilities->attach = true;
  auto fixture = MakeFixture(profile.fixture, dir.path());
  sim::BoostProcessRunner runner;
  CaseContext c(profile, dir.Join("case"), "r1c1", 1, *fixture, runner, 1);
  const sim::VolumeSpec spec = c.Volume("v");
  auto& n = c.node(0);
  const auto by = sim::Component::kController;

  sim::VolumeOperations& controller = c.control_plane();
  const auto asked = controller.CallIsAttached(n, by, spec, n.name());
  ASSERT_TRUE(asked.verdict.status.has_value()) << asked.verdict.error;
  EXPECT_EQ(asked.verdict.status->message, sim::kControlPlaneName);
  EXPECT_TRUE(Rules(c).empty());

  // jq is not on the control plane's PATH: a warning, not a finding.
  const size_t warned = c.warnings().size();
  const auto attached = controller.CallAttach(n, by, spec, n.name());
  EXPECT_FALSE(attached.verdict.status.has_value());
  EXPECT_TRUE(Rules(c).empty());
  ASSERT_GT(c.warnings().size(), warned);
  EXPECT_NE(c.warnings().back().find("F2"), std::string::npos) << c.warnings().back();

  // The same verbs through ops(): the control plane's hostname, the node's
  // PATH, so attach's jq runs (where the machine has it).
  const auto asked_by_ops = c.ops().CallIsAttached(n, by, spec, n.name());
  ASSERT_TRUE(asked_by_ops.verdict.status.has_value()) << asked_by_ops.verdict.error;
  EXPECT_EQ(asked_by_ops.verdict.status->message, sim::kControlPlaneName);
  if (std::filesystem::exists("/usr/bin/jq")) {
    const auto by_ops = c.ops().CallAttach(n, by, spec, n.name());
    ASSERT_TRUE(by_ops.verdict.status.has_value()) << by_ops.verdict.error;
    EXPECT_TRUE(Rules(c).empty());
  }

  // Chatter on stderr beside a good reply is the reply rule's finding.
  c.ops().CallDetach(n, by, spec, n.name());
  ASSERT_EQ(Rules(c).size(), 1u);
  EXPECT_EQ(Rules(c)[0].rfind("F1/F2/F3 one-json-reply: ", 0), 0u) << Rules(c)[0];
}

}  // namespace
}  // namespace flexkit::conform
