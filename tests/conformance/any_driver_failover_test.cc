// [failover], [sequence] and the host-wide leak audit on drivers with no
// fixture at all: the committed shell drivers in drivers/ (an attachable
// one whose cloud is a shared directory, a mount-only one whose volumes
// are directories on a shared path) PASS, and each of their one-defect
// mutants FAILs exactly the expected cases with `--driver D` alone (or a
// profile of three lines). A leaking mutant leaves the host as it found
// it; a command fixture's hook that fails or prints garbage FAILs its case
// under the fixture's rule, naming the hook, and the run goes on.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/flexconform_verdicts.h"
#include "tests/support/report_schema.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::TempDir;

const std::string kDrivers = FLEXKIT_DRIVERS_DIR;

using Run = flexkit::testing::FlexconformVerdicts;

Run Flexconform(const TempDir& dir, std::vector<std::string> args,
                std::map<std::string, std::string> env = {}) {
  // A fixed seed and three walks keep [sequence], and so the expectations,
  // the same on every run; depth 2 keeps the exhaustive case to seconds
  // (depth 4 on two nodes takes a shell driver a minute).
  args.insert(args.end(), {"--seed", "1", "--random", "3", "--depth", "2"});
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(400);
  options.extra_env = std::move(env);
  Run run = flexkit::testing::RunFlexconformVerdicts(dir, std::move(args), options);
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(dir.Join("r.json")), "");
  return run;
}

std::string Driver(const std::string& family, const std::string& defect) {
  return kDrivers + "/" + family + "~" + defect + "/" + defect;
}

struct Graded {
  std::string family;   // shared-dir-attach or shared-path-mount
  std::string defect;   // clean: none
  std::string profile;  // empty: --driver alone
  // The cases graded FAIL or WARN; every other case must PASS or SKIP.
  std::set<std::string> fails;
};
void PrintTo(const Graded& g, std::ostream* os) { *os << g.family << "~" << g.defect; }

const std::vector<Graded>& Drivers() {
  static const std::vector<Graded> drivers = {
#include "drivers/expected.inc"
  };
  return drivers;
}

class AnyDriverFailover : public ::testing::TestWithParam<Graded> {};

TEST_P(AnyDriverFailover, FailsExactlyTheExpectedCases) {
  FLEXKIT_REQUIRE_ROOT();
  const Graded& g = GetParam();
  TempDir dir("flexconform-any-driver");
  std::vector<std::string> args = {"--driver", Driver(g.family, g.defect)};
  if (!g.profile.empty()) args.insert(args.begin(), {"--profile", kDrivers + "/" + g.profile});
  // The clean drivers pass everything; a mutant's defect shows in these
  // groups (the host leak audit runs in every case anyway).
  if (g.defect != "clean") args.insert(args.end(), {"--focus", "^(lifecycle|failover|sequence)/"});
  auto run = Flexconform(dir, args);
  ASSERT_TRUE(run.process.exit_code == 0 || run.process.exit_code == 1)
      << run.process.out << run.process.err;
  std::set<std::string> failed;
  std::string why;
  for (const auto& [name, verdict] : run.verdicts) {
    if (verdict == "FAIL" || verdict == "WARN") failed.insert(name);
    if (verdict != "PASS") why += name + " " + verdict + ": " + run.reasons[name] + "\n";
  }
  EXPECT_EQ(failed, g.fails) << why;
  EXPECT_EQ(run.process.exit_code, g.fails.empty() ? 0 : 1);
  if (g.defect == "clean" && g.family == "shared-dir-attach") {
    // Every [failover] case that needs no partition hook and is not mount-only passed.
    for (const auto& [name, verdict] : run.verdicts) {
      if (name.rfind("failover/", 0) == 0 && name.find("partition") == std::string::npos &&
          name.find("mount-only") == std::string::npos) {
        EXPECT_EQ(verdict, "PASS") << name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Drivers, AnyDriverFailover, ::testing::ValuesIn(Drivers()),
                         [](const auto& graded) {
                           std::string name = graded.param.family + "_" + graded.param.defect +
                                              (graded.param.profile.empty() ? "" : "_profile");
                           for (auto& ch : name) {
                             if (ch == '-' || ch == '~') ch = '_';
                           }
                           return name;
                         });

// What the host shows of things under `root`: loop devices, mounts, and
// processes whose environment names a case dir there.
std::string HostUnder(const std::string& root) {
  std::string out;
  auto loops = flexkit::testing::RunProcess({"/usr/sbin/losetup", "-a"});
  std::istringstream l(loops.out);
  for (std::string line; std::getline(l, line);) {
    if (line.find(root) != std::string::npos) out += "loop: " + line + "\n";
  }
  auto mounts = flexkit::testing::RunProcess({"/usr/bin/findmnt", "-rn", "-o", "TARGET,SOURCE"});
  std::istringstream m(mounts.out);
  for (std::string line; std::getline(m, line);) {
    if (line.find(root) != std::string::npos) out += "mount: " + line + "\n";
  }
  auto procs = flexkit::testing::RunProcess(
      {"/bin/sh", "-c",
       "grep -l -a -F \"FLEXCONFORM_CASE_DIR=" + root + "\" /proc/[0-9]*/environ 2>/dev/null"});
  if (!procs.out.empty()) out += "processes: " + procs.out;
  return out;
}

// detach answers Success and keeps the loop device, over a cloud dir
// outside the run dir: every leak is found (F26), then reclaimed, so the
// host has exactly what it had, and nothing was cleaned up by hand.
TEST(AnyDriverLeaks, ALeakingMutantLeavesTheHostAsItFoundIt) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-leaks");
  TempDir cloud("flexconform-leaks-cloud");
  const std::string before_here = HostUnder(cloud.path()) + HostUnder(dir.path());
  auto run = Flexconform(
      dir,
      {"--driver", Driver("shared-dir-attach", "detach-keeps-loop"), "--focus",
       "^(lifecycle/attachable|failover/crash-reschedule-controller-inline|sequence/random)"},
      {{"SHARED_DIR_ATTACH_ROOT", cloud.path()}});
  ASSERT_EQ(run.process.exit_code, 1) << run.process.out << run.process.err;
  for (const auto& name :
       {"lifecycle/attachable", "failover/crash-reschedule-controller-inline", "sequence/random"}) {
    EXPECT_EQ(run.verdicts[name], "FAIL") << name;
    EXPECT_NE(run.reasons[name].find("loop device left"), std::string::npos) << run.reasons[name];
    EXPECT_NE(run.reasons[name].find(cloud.path()), std::string::npos) << run.reasons[name];
    EXPECT_NE(run.reasons[name].find("(reclaimed)"), std::string::npos) << run.reasons[name];
    EXPECT_EQ(run.reasons[name].find("could not reclaim"), std::string::npos) << run.reasons[name];
  }
  EXPECT_EQ(HostUnder(cloud.path()) + HostUnder(dir.path()), before_here);
  EXPECT_EQ(before_here, "");
}

// The run's JSON report (r.json in `dir`), and one case's driver calls in
// order (what a finding's `call` counts).
nlohmann::json ReadReport(const TempDir& dir) {
  std::ifstream in(dir.Join("r.json"));
  return nlohmann::json::parse(in);
}

std::vector<nlohmann::json> CallsOf(const nlohmann::json& c) {
  std::vector<nlohmann::json> calls;
  for (const auto& entry : c["transcript"]) {
    if (entry["type"] == "call") calls.push_back(entry);
  }
  return calls;
}

// isattached answers attached for both nodes (and false for a volume never
// attached, so it witnesses): the F14 finding names the call that said
// attached, not the witness probe made after it, which rightly said false.
TEST(AnyDriverBlame, AnF14FindingNamesTheIsAttachedCallThatSaidAttached) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-blame-call");
  auto run = Flexconform(dir, {"--driver", Driver("shared-dir-attach", "isattached-any-node"),
                               "--focus", "^failover/crash-reschedule-controller-rwo-pv "});
  ASSERT_EQ(run.process.exit_code, 1) << run.process.out << run.process.err;
  const auto report = ReadReport(dir);
  ASSERT_EQ(report["cases"].size(), 1u);
  const auto& c = report["cases"][0];
  const auto calls = CallsOf(c);
  int judged = 0;
  for (const auto& f : c["findings"]) {
    const std::string why = f["why"];
    if (why.find("isattached says") == std::string::npos) continue;
    ASSERT_TRUE(f.contains("call")) << why;
    const auto& call = calls.at(f["call"].get<std::size_t>());
    EXPECT_EQ(call["verb"], "isattached") << why;
    EXPECT_EQ(call["verdict"]["attached"], true) << why << "\n" << call.dump();
    ++judged;
  }
  EXPECT_GT(judged, 0) << c["reason"];
}

// The attach that makes the device prints a debug line (kubelet cannot
// decode it; the retry answers cleanly). kubelet's attacher tries again and
// goes on, so the case does: one rule (F1) for the one cause, the volume set
// up and torn down to its detach, nothing left for F26 to blame.
TEST(AnyDriverBlame, AChattyFirstAttachIsOneRuleAndTheCaseGoesOnToItsDetach) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-chatty-attach");
  auto run = Flexconform(dir, {"--driver", Driver("shared-dir-attach", "chatty-first-attach"),
                               "--focus", "^(lifecycle/attachable|sequence/random) "});
  ASSERT_EQ(run.process.exit_code, 1) << run.process.out << run.process.err;
  const auto report = ReadReport(dir);
  ASSERT_EQ(report["cases"].size(), 2u);
  for (const auto& c : report["cases"]) {
    const std::string name = c["name"];
    EXPECT_EQ(c["verdict"], "FAIL") << name;
    EXPECT_EQ(c["rules"].size(), 1u) << name << ": " << c["rules"].dump();
    for (const auto& rule : c["rules"])
      EXPECT_EQ(rule.get<std::string>().rfind("F1/F2/F3 one-json-reply", 0), 0u) << name;
    if (name != "lifecycle/attachable") continue;
    std::vector<std::string> verbs;
    for (const auto& call : CallsOf(c)) verbs.push_back(call["verb"]);
    ASSERT_GE(verbs.size(), 2u);
    EXPECT_EQ(verbs[0], "attach");
    EXPECT_EQ(verbs[1], "attach") << "the attacher tries again";
    EXPECT_NE(std::find(verbs.begin(), verbs.end(), "mount"), verbs.end());
    EXPECT_NE(std::find(verbs.begin(), verbs.end(), "detach"), verbs.end());
  }
}

// A command fixture whose crash hook fails: the case that runs it FAILs
// under the fixture's rule, naming the hook and quoting its output; the other
// cases still run and pass.
TEST(AnyDriverHooks, AFailingHookFailsItsCaseNamingTheHookAndTheRunGoesOn) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-hooks");
  const std::string profile = dir.Join("p.yaml");
  std::ofstream(profile) << "driver: " << Driver("shared-dir-attach", "clean") << "\n"
                         << "nodes: 2\n"
                         << "fixture:\n"
                         << "  kind: command\n"
                         << "  setup: 'true'\n"
                         << "  crash: 'echo backend says no for {{node}}; exit 3'\n"
                         << "  hookTimeout: 5s\n";
  auto run = Flexconform(dir, {"--profile", profile, "--focus",
                               "^(failover/crash-reschedule-kubelet-inline|failover/attach-"
                               "refused-while-owner-alive-kubelet-rwo-pv|lifecycle/attachable) "});
  EXPECT_EQ(run.process.exit_code, 1) << run.process.out;
  const std::string crash = run.reasons["failover/crash-reschedule-kubelet-inline"];
  EXPECT_EQ(run.verdicts["failover/crash-reschedule-kubelet-inline"], "FAIL");
  EXPECT_NE(crash.find("fixture hook crash for node-1"), std::string::npos) << crash;
  EXPECT_NE(crash.find("backend says no for node-1"), std::string::npos) << crash;
  EXPECT_NE(crash.find("exit status 3"), std::string::npos) << crash;
  EXPECT_EQ(run.verdicts["failover/attach-refused-while-owner-alive-kubelet-rwo-pv"], "PASS");
  EXPECT_EQ(run.verdicts["lifecycle/attachable"], "PASS");
}

// A hook that hangs is killed at hookTimeout and named.
TEST(AnyDriverHooks, AHangingHookIsKilledAtItsTimeout) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-hooks");
  const std::string profile = dir.Join("p.yaml");
  std::ofstream(profile) << "driver: " << Driver("shared-dir-attach", "clean") << "\n"
                         << "nodes: 2\n"
                         << "fixture: {kind: command, setup: 'true', restart: 'echo waiting; sleep "
                            "60', hookTimeout: 1s}\n";
  auto run = Flexconform(
      dir, {"--profile", profile, "--focus", "^failover/node-returns-before-move-kubelet "});
  const std::string why = run.reasons["failover/node-returns-before-move-kubelet"];
  EXPECT_EQ(run.verdicts["failover/node-returns-before-move-kubelet"], "FAIL") << why;
  EXPECT_NE(why.find("fixture hook restart for node-1"), std::string::npos) << why;
  EXPECT_NE(why.find("still running after 1000 ms"), std::string::npos) << why;
  EXPECT_NE(why.find("waiting"), std::string::npos) << why;
}

// `nodes: 1` still runs; the failover cases SKIP saying why.
TEST(AnyDriverHooks, OneNodeRunsAndFailoverSkipsWithTheReason) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-one-node");
  const std::string profile = dir.Join("p.yaml");
  std::ofstream(profile) << "driver: " << Driver("shared-dir-attach", "clean") << "\nnodes: 1\n";
  auto run =
      Flexconform(dir, {"--profile", profile, "--focus",
                        "^(failover/crash-reschedule-kubelet-inline|lifecycle/attachable) "});
  const std::string why = run.reasons["failover/crash-reschedule-kubelet-inline"];
  EXPECT_EQ(run.verdicts["failover/crash-reschedule-kubelet-inline"], "SKIP") << why;
  EXPECT_NE(why.find("nodes: 2"), std::string::npos) << why;
  EXPECT_EQ(run.verdicts["lifecycle/attachable"], "PASS");
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out;
}

TEST(AnyDriverHooks, AGarbledAttachmentsHookIsAFixtureError) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-hooks");
  const std::string profile = dir.Join("p.yaml");
  std::ofstream(profile) << "driver: " << Driver("shared-dir-attach", "clean") << "\n"
                         << "nodes: 2\n"
                         << "fixture:\n"
                         << "  kind: command\n"
                         << "  setup: 'true'\n"
                         << "  attachments: 'echo \"{oops\"'\n";
  auto run = Flexconform(dir, {"--profile", profile, "--focus",
                               "^failover/attach-refused-while-owner-alive-kubelet-rwo-pv "});
  const std::string why = run.reasons["failover/attach-refused-while-owner-alive-kubelet-rwo-pv"];
  EXPECT_EQ(run.verdicts["failover/attach-refused-while-owner-alive-kubelet-rwo-pv"], "FAIL");
  EXPECT_NE(why.find("fixture hook attachments"), std::string::npos) << why;
  EXPECT_NE(why.find("{oops"), std::string::npos) << why;
}

}  // namespace
