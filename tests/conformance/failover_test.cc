// The [failover] cases (issue 7) end to end, as root: the bundled
// convoy-flexvolume on the fake Convoy/EBS passes every one, and each
// failover mutant (convoy-flexvolume with one defect, see
// mutants/convoy_failover_mutant.cc) FAILs exactly the expected cases.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::RunProcess;

const std::vector<std::string> kFailoverCases = {
    "failover/crash-reschedule-controller-rwo-pv",
    "failover/crash-reschedule-controller-inline",
    "failover/crash-reschedule-kubelet-rwo-pv",
    "failover/crash-reschedule-kubelet-inline",
    "failover/node-returns-before-move-controller",
    "failover/node-returns-before-move-kubelet",
    "failover/attach-refused-while-owner-alive-controller-inline",
    "failover/attach-refused-while-owner-alive-kubelet-rwo-pv",
    "failover/partition-daemon-unreachable-controller",
    "failover/partition-daemon-unreachable-kubelet",
};

const std::string kFaultCase = "faults/isattached-with-backend-unreachable";

std::vector<std::string> WithFaultCase(std::vector<std::string> cases) {
  cases.push_back(kFaultCase);
  return cases;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// name -> verdict, and the reasons of the failures for messages.
std::map<std::string, std::string> Verdicts(const nlohmann::json& doc, std::string* reasons) {
  std::map<std::string, std::string> verdicts;
  for (const auto& c : doc["cases"]) {
    verdicts[c["name"]] = c["verdict"];
    if (c["verdict"] != "PASS")
      *reasons += c["name"].get<std::string>() + ": " + c["reason"].get<std::string>() + "\n";
  }
  return verdicts;
}

TEST(Failover, BundledConvoyPassesEveryFailoverCaseOnTheFake) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-failover");
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(300);
  auto r = RunProcess({BuiltBinary("conformance/flexconform"), "--focus", "\\[failover\\]",
                       "--json", dir.Join("r.json"), "--run-root", dir.path()},
                      options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string reasons;
  auto verdicts = Verdicts(ReadJson(dir.Join("r.json")), &reasons);
  EXPECT_EQ(verdicts.size(), kFailoverCases.size()) << r.out;
  for (const auto& name : kFailoverCases)
    EXPECT_EQ(verdicts[name], "PASS") << name << "\n" << reasons;
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
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(300);
  auto r = RunProcess(
      {BuiltBinary("conformance/flexconform"), "--profile", dir.Join("profile.yaml"), "--focus",
       "\\[failover\\]", "--json", dir.Join("r.json"), "--run-root", dir.path()},
      options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string reasons;
  auto verdicts = Verdicts(ReadJson(dir.Join("r.json")), &reasons);
  int passed = 0;
  for (const auto& [name, verdict] : verdicts) {
    const bool skipped = reasons.find(name + ": profile: " + shared) != std::string::npos;
    EXPECT_TRUE(verdict == "PASS" || (verdict == "SKIP" && skipped)) << name << "\n" << reasons;
    passed += verdict == "PASS";
  }
  EXPECT_EQ(passed, 7) << reasons;
}

struct FailoverMutant {
  std::string defect;
  std::vector<std::string> failing;  // exactly these [failover]/[faults] cases FAIL; the others PASS
};

void PrintTo(const FailoverMutant& m, std::ostream* os) { *os << m.defect; }

class FailoverMutantTest : public ::testing::TestWithParam<FailoverMutant> {};

TEST_P(FailoverMutantTest, FailsExactlyTheExpectedCases) {
  FLEXKIT_REQUIRE_ROOT();
  const FailoverMutant& m = GetParam();
  flexkit::testing::TempDir dir("flexconform-failover-mutant");
  const std::string convoy = dir.Join("convoy") + "/";
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
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(400);
  auto r = RunProcess(
      {BuiltBinary("conformance/flexconform"), "--profile", dir.Join("profile.yaml"), "--focus",
       "\\[failover\\]|\\[faults\\]", "--json", dir.Join("r.json"), "--run-root", dir.path()},
      options);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  std::string reasons;
  auto verdicts = Verdicts(ReadJson(dir.Join("r.json")), &reasons);
  ASSERT_FALSE(verdicts.empty()) << r.out;
  std::map<std::string, std::string> expected;
  for (const auto& [name, verdict] : verdicts) expected[name] = "PASS";
  for (const auto& name : m.failing) expected[name] = "FAIL";
  EXPECT_EQ(verdicts, expected) << reasons;
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
        FailoverMutant{"skip-clean-unmount", WithFaultCase(kFailoverCases)},
        // F28: a daemon it cannot reach makes the volume look detached.
        FailoverMutant{"isattached-hides-errors", {kFaultCase}}),
    [](const auto& mutant_info) {
      std::string name = mutant_info.param.defect;
      for (auto& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

}  // namespace
