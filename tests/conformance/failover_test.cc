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
// (two nodes, stock and extended convoy-fake, accessMode ReadWriteMany)
// pass every case that applies across the whole catalog, the four that
// would refuse a second node's attach included.
class BundledVfsProfile : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Profile() const {
    return std::string(FLEXKIT_PROFILES_DIR) + "/convoy-vfs-" + GetParam() + ".yaml";
  }
  static constexpr const char* kSecondNodeCases[] = {
      "failover/attach-refused-while-owner-alive-controller-inline",
      "failover/attach-refused-while-owner-alive-kubelet-rwo-pv",
      "failover/partition-daemon-unreachable-kubelet",
      "failover/partition-daemon-unreachable-controller"};
};

TEST_P(BundledVfsProfile, PassesEveryCaseThatApplies) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-vfs-" + GetParam());
  auto run = RunFlexconform(
      dir, {"--profile", Profile(), "--driver", BuiltBinary("driver/convoy-flexvolume")},
      std::chrono::seconds(300));
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  int passed = 0;
  for (const auto& [name, verdict] : run.verdicts) {
    passed += verdict == "PASS";
    EXPECT_TRUE(verdict == "PASS" || verdict == "SKIP") << name << "\n" << run.reasons;
  }
  for (const char* name : kSecondNodeCases) EXPECT_EQ(run.verdicts[name], "PASS") << run.reasons;
  EXPECT_EQ(run.verdicts["failover/crash-reschedule-kubelet-rwo-pv"], "PASS") << run.reasons;
  EXPECT_EQ(run.verdicts["sequence/random"], "PASS") << run.reasons;
  // A VFS volume is a bind of a directory on the same filesystem as
  // kubelet's dir here: the pod dir is the volume all the same.
  EXPECT_EQ(run.verdicts["metrics/statfs-reports-the-volume"], "PASS") << run.reasons;
  EXPECT_GE(passed, 45) << run.reasons;
}

// The same profile without accessMode: the default single-attach rule
// stands, and the driver that lets a second node mount is F14.
TEST_P(BundledVfsProfile, WithoutReadWriteManyASecondNodesMountIsF14) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-vfs-rwo-" + GetParam());
  std::ifstream in(Profile());
  std::ofstream out(dir.Join("profile.yaml"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("accessMode:", 0) != 0) out << line << "\n";
  }
  out.close();
  std::string focus = "^(";
  for (const char* name : kSecondNodeCases) focus += std::string(name) + "|";
  focus.back() = ')';
  auto run = RunFlexconform(dir,
                            {"--profile", dir.Join("profile.yaml"), "--driver",
                             BuiltBinary("driver/convoy-flexvolume"), "--focus", focus},
                            std::chrono::seconds(300));
  EXPECT_NE(run.process.exit_code, 0);
  for (const char* name : kSecondNodeCases)
    EXPECT_EQ(run.verdicts[name], "FAIL") << name << "\n" << run.reasons;
  // The console's rule summary: all four under F14.
  EXPECT_NE(run.process.out.find("F14 follows-pod: a volume follows its pod safely, "
                                 "attached to one node at a time: 4 cases"),
            std::string::npos)
      << run.process.out;
}

INSTANTIATE_TEST_SUITE_P(Api, BundledVfsProfile, ::testing::Values("stock", "extended"),
                         [](const auto& api) { return api.param; });

}  // namespace
