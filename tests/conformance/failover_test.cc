// The [failover] cases end to end, as root: the bundled
// convoy-flexvolume on the fake Convoy/EBS passes every one, over EBS and
// over VFS.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/conformance/failover_verdicts.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::kFailoverCases;
using flexkit::testing::kMountOnlyFailoverCases;
using flexkit::testing::RunFlexconform;

TEST(Failover, BundledConvoyPassesEveryFailoverCaseOnTheFake) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-failover");
  auto run = RunFlexconform(dir, {"--focus", "\\[failover\\]"}, std::chrono::seconds(300));
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_EQ(run.verdicts.size(), kFailoverCases.size() + kMountOnlyFailoverCases.size())
      << run.process.out;
  for (const auto& name : kFailoverCases)
    EXPECT_EQ(run.verdicts[name], "PASS") << name << "\n" << run.reasons;
  for (const auto& name : kMountOnlyFailoverCases)
    EXPECT_EQ(run.verdicts[name], "SKIP") << name << "\n" << run.reasons;
}

// VFS: a volume is a directory on a path every node's daemon shares (as
// NFS), so there is no attachment to refuse: the cases where B must be
// refused while A lives do not apply, and the profile says so.
TEST(Failover, ConvoyVfsPassesTheFailoverCasesThatApply) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-failover-vfs");
  const std::string shared = "a vfs volume is a shared directory that two nodes may use at once";
  std::ofstream(dir.Join("profile.yaml"))
      << "driver: " << BuiltBinary("driver/convoy-flexvolume") << "\n"
      << "driverName: rancher.io/convoy\n"
      << "capabilities: {attach: true, supportsMetrics: true, requiresFSResize: false}\n"
      << "attachManagement: kubelet\n"
      << "volumeOptions: {convoyDriver: vfs}\n"
      << "nodes: 2\n"
      << "privileges: root\n"
      << "skip:\n"
      << "  failover/attach-refused-while-owner-alive-controller-inline: " << shared << "\n"
      << "  failover/attach-refused-while-owner-alive-kubelet-rwo-pv: " << shared << "\n"
      << "  failover/partition-daemon-unreachable-kubelet: " << shared << "\n"
      << "fixture: {kind: convoy-fake, convoyFake: " << BuiltBinary("fakes/convoy-fake") << "}\n";
  auto run =
      RunFlexconform(dir, {"--profile", dir.Join("profile.yaml"), "--focus", "\\[failover\\]"},
                     std::chrono::seconds(300));
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  int passed = 0;
  for (const auto& [name, verdict] : run.verdicts) {
    const bool skipped =
        run.reasons.find(name + ": profile: " + shared) != std::string::npos ||
        run.reasons.find(name + ": capability: init says attach:true") != std::string::npos;
    EXPECT_TRUE(verdict == "PASS" || (verdict == "SKIP" && skipped)) << name << "\n" << run.reasons;
    passed += verdict == "PASS";
  }
  EXPECT_EQ(passed, 7) << run.reasons;
}

}  // namespace
