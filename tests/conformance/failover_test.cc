// The [failover] cases end to end, as root: the bundled
// convoy-flexvolume on the fake Convoy/EBS passes every one, over EBS and
// over VFS (the bundled VFS profiles, whole catalog, both APIs).
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
// NFS), which several nodes may mount at once. The bundled VFS profiles
// (two nodes, stock and extended convoy-fake) pass every case that applies
// across the whole catalog, and skip, naming why, only the cases that judge
// a volume by the single-attach rule (and the metrics case, below).
class BundledVfsProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(BundledVfsProfile, PassesEveryCaseThatApplies) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-vfs-" + GetParam());
  const std::string profile =
      std::string(FLEXKIT_PROFILES_DIR) + "/convoy-vfs-" + GetParam() + ".yaml";
  auto run = RunFlexconform(
      dir, {"--profile", profile, "--driver", BuiltBinary("driver/convoy-flexvolume")},
      std::chrono::seconds(300));
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  const std::string shared = "profile: a vfs volume is a shared directory that several nodes";
  int passed = 0, shared_skips = 0;
  for (const auto& [name, verdict] : run.verdicts) {
    passed += verdict == "PASS";
    if (verdict != "SKIP") {
      EXPECT_EQ(verdict, "PASS") << name << "\n" << run.reasons;
      continue;
    }
    if (run.reasons.find(name + ": " + shared) != std::string::npos) {
      EXPECT_EQ(name.rfind("failover/", 0), 0u) << name << " skipped as shared storage";
      ++shared_skips;
    }
  }
  EXPECT_EQ(shared_skips, 4) << run.reasons;
  EXPECT_EQ(run.verdicts["failover/crash-reschedule-kubelet-rwo-pv"], "PASS") << run.reasons;
  EXPECT_EQ(run.verdicts["sequence/random"], "PASS") << run.reasons;
  EXPECT_GE(passed, 40) << run.reasons;
}

INSTANTIATE_TEST_SUITE_P(Api, BundledVfsProfile, ::testing::Values("stock", "extended"),
                         [](const auto& api) { return api.param; });

}  // namespace
