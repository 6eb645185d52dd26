// Each failover mutant (convoy-flexvolume with one defect, see
// mutants/convoy_failover_mutant.cc) FAILs exactly the expected [failover]
// and [faults] cases, as root.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/conformance/failover_verdicts.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::kFailoverCases;
using flexkit::testing::kIsAttachedCase;
using flexkit::testing::RunFlexconform;
using flexkit::testing::WithFaultCases;

struct FailoverMutant {
  std::string defect;
  std::vector<std::string>
      failing;  // exactly these FAIL; the mount-only cases SKIP, the others PASS
};

void PrintTo(const FailoverMutant& m, std::ostream* os) { *os << m.defect; }

class FailoverMutantTest : public ::testing::TestWithParam<FailoverMutant> {};

TEST_P(FailoverMutantTest, FailsExactlyTheExpectedCases) {
  FLEXKIT_REQUIRE_ROOT();
  const FailoverMutant& m = GetParam();
  flexkit::testing::TempDir dir("flexconform-failover-mutant");
  std::ofstream(dir.Join("profile.yaml"))
      << "driver: " << BuiltBinary("tests/conformance/convoy-failover-mutant") << "\n"
      << "driverName: rancher.io/convoy\n"
      << "capabilities: {attach: true, supportsMetrics: true, requiresFSResize: false}\n"
      << "attachManagement: kubelet\n"
      << "volumeOptions: {size: 320Mi}\n"
      << "fsTypes: [ext4]\n"
      << "nodes: 2\n"
      << "nodeEnv:\n"
      << "  FLEXKIT_MUTANT: " << m.defect << "\n"
      << "  FLEXKIT_MUTANT_CLOUD: '{{case_dir}}/convoy/cloud.sock'\n"
      << "  FLEXKIT_MUTANT_PEERS: '{{case_dir}}/convoy/node-1.sock "
         "{{case_dir}}/convoy/node-2.sock'\n"
      << "privileges: root\n"
      << "fixture: {kind: convoy-fake, convoyFake: " << BuiltBinary("fakes/convoy-fake") << "}\n";
  auto run = RunFlexconform(
      dir, {"--profile", dir.Join("profile.yaml"), "--focus", "\\[failover\\]|\\[faults\\]"},
      std::chrono::seconds(400));
  const auto& r = run.process;
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  const auto& verdicts = run.verdicts;
  ASSERT_FALSE(verdicts.empty()) << r.out;
  std::map<std::string, std::string> expected;
  for (const auto& [name, verdict] : verdicts) expected[name] = "PASS";
  for (const auto& name : m.failing) expected[name] = "FAIL";
  for (const auto& name : flexkit::testing::kMountOnlyFailoverCases) expected[name] = "SKIP";
  EXPECT_EQ(verdicts, expected) << run.reasons;
  EXPECT_EQ(r.exit_code, m.failing.empty() ? 0 : 1);
}

INSTANTIATE_TEST_SUITE_P(
    Mutants, FailoverMutantTest,
    ::testing::Values(
        // The control: the mutant binary without a defect passes.
        FailoverMutant{"none", {}},
        // Only while the owner is alive: a dead owner's volume is free to take.
        FailoverMutant{"steal-live-attachment",
                       {"failover/attach-refused-while-owner-alive-controller-inline",
                        "failover/attach-refused-while-owner-alive-kubelet-rwo-pv"}},
        // Only where B holds the volume when A's late detach comes.
        FailoverMutant{"detach-anywhere",
                       {"failover/crash-reschedule-controller-inline",
                        "failover/crash-reschedule-kubelet-rwo-pv",
                        "failover/crash-reschedule-kubelet-inline"}},
        // Wherever a node other than the first adopts the data.
        FailoverMutant{
            "reformat-on-adopt",
            {"failover/crash-reschedule-controller-rwo-pv",
             "failover/crash-reschedule-controller-inline",
             "failover/crash-reschedule-kubelet-rwo-pv", "failover/crash-reschedule-kubelet-inline",
             "failover/node-returns-before-move-controller",
             "failover/node-returns-before-move-kubelet",
             "failover/partition-daemon-unreachable-controller",
             "failover/partition-daemon-unreachable-kubelet"}},
        // Every case tears a volume down at least once (F11: still mounted).
        FailoverMutant{"skip-clean-unmount", WithFaultCases(kFailoverCases)},
        // F28: a daemon it cannot reach makes the volume look detached.
        FailoverMutant{"isattached-hides-errors", {kIsAttachedCase}}),
    [](const auto& mutant_info) {
      std::string name = mutant_info.param.defect;
      for (auto& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

}  // namespace
