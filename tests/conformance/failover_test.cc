// The [failover] cases (issue 7) end to end, as root: the bundled
// convoy-flexvolume on the fake Convoy/EBS passes every one, over EBS and
// over VFS.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/conformance/failover_verdicts.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::kFailoverCases;
using flexkit::testing::ReadJson;
using flexkit::testing::RunProcess;
using flexkit::testing::Verdicts;

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

}  // namespace
