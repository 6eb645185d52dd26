// flexconform's command line on whole runs of the mutant drivers in
// mutants/: -j (leaks attributed to their case), SIGINT, --retries,
// --baseline, and a [sequence] FAIL's seed replayed alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/report_schema.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

// Verdicts of a case's name, from a JSON report.
std::map<std::string, std::string> Verdicts(const std::string& report) {
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(report), "");
  std::ifstream in(report);
  const auto doc = nlohmann::json::parse(in);
  std::map<std::string, std::string> verdicts;
  for (const auto& c : doc["cases"]) verdicts[c["name"]] = c["verdict"];
  return verdicts;
}

// Cases that overlap (-j) are graded as they are one at a time: the
// daemon a case's driver leaves (reparented away, carrying the case dir)
// is that case's leak alone, and nothing of a sibling case is mistaken for
// the case's, or reclaimed from under it.
// A driver's Failure that names the secret it was given: the case's why
// quotes the reply, and the report and console still show no secret.
TEST(Secrets, AFailureNamingASecretIsRedactedInTheWhy) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-secret-why");
  const std::string folder = dir.Join("flexkit~names-secret");
  std::filesystem::create_directories(folder);
  const std::string driver = folder + "/names-secret";
  std::ofstream(driver) << R"sh(#!/bin/sh
case "$1" in
  init) printf '{"status":"Success","capabilities":{"attach":false}}\n' ;;
  mount) user=${3#*\"kubernetes.io/secret/username\":\"} user=${user%%\"*}
    printf '{"status":"Failure","message":"login as %s refused"}\n' "$(printf %s "$user" | base64 -d)"
    exit 1 ;;
  *) printf '{"status":"Not supported"}\n' ;;
esac
)sh";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  const std::string secret = "flexkit-user-5ecret";
  std::ofstream(dir.Join("profile.yaml"))
      << "driver: " << driver << "\nsecrets: {username: " << secret << "}\n";
  auto r = flexkit::testing::RunProcess({flexkit::testing::BuiltBinary("conformance/flexconform"),
                                         "--profile", dir.Join("profile.yaml"), "--focus",
                                         "^lifecycle/mount-only\\b", "--json", dir.Join("r.json"),
                                         "--run-root", dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string report = flexkit::testing::ReadFileText(dir.Join("r.json"));
  EXPECT_NE(report.find("login as <redacted> refused"), std::string::npos) << report;
  EXPECT_EQ(report.find(secret), std::string::npos);
  EXPECT_EQ((r.out + r.err).find(secret), std::string::npos) << r.out << r.err;
}

TEST(ParallelRun, GradesAsTheSerialRunAndAttributesEachLeakToItsCase) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  auto run = [&mutants](const std::string& jobs) {
    flexkit::testing::TempDir dir("flexconform-parallel");
    flexkit::testing::RunOptions options;
    options.deadline = std::chrono::seconds(180);
    auto r = flexkit::testing::RunProcess(
        {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
         mutants + "/profile.yaml", "--driver", mutants + "/mutant~leaked-daemon/leaked-daemon",
         "--focus", "^(lifecycle|idempotency|teardown|robustness)/", "-j", jobs, "--json",
         dir.Join("r.json"), "--run-root", dir.path()},
        options);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    return Verdicts(dir.Join("r.json"));
  };
  const auto serial = run("1");
  const auto parallel = run("6");
  EXPECT_EQ(parallel, serial);
  int fails = 0;
  for (const auto& [name, verdict] : serial) fails += verdict == "FAIL";
  EXPECT_GE(fails, 5) << "every case that mounts leaves the daemon";
  EXPECT_LT(static_cast<std::size_t>(fails), serial.size()) << "cases that never mount PASS";
}

// SIGINT: the running cases finish and clean up, no more start, the run
// exits 2 with the finished cases reported and nothing left behind.
TEST(ParallelRun, AnInterruptedRunFinishesTheRunningCasesAndLeavesNothing) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  flexkit::testing::TempDir dir("flexconform-interrupted");
  flexkit::testing::TempDir logs("flexconform-interrupted-logs");
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(120);
  // The interrupt comes once two cases have run (the SKIPs that come first
  // take no time: flexconform may not be listening for SIGINT yet), and the
  // script records how many verdicts were printed when it was sent.
  auto r = flexkit::testing::RunProcess(
      {"/bin/sh", "-c",
       "\"$0\" --profile \"$1\" --driver \"$2\" -j 2 --random 3 --json \"$3/r.json\" --run-root "
       "\"$3\" > \"$4/out\" 2>&1 & out=$4/out; "
       "done_cases() { grep -c '^\\[[0-9]*/[0-9]*\\] ' \"$out\"; }; "
       "ran_cases() { grep -c '^\\[[0-9]*/[0-9]*\\] \\(PASS\\|WARN\\|FAIL\\)' \"$out\"; }; "
       "i=0; until [ \"$(ran_cases)\" -ge 2 ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i+1)); done; "
       "kill -INT $!; done_cases > \"$4/at-interrupt\"; wait $!; status=$?; cat \"$out\"; "
       "exit $status",
       flexkit::testing::BuiltBinary("conformance/flexconform"), mutants + "/profile.yaml",
       mutants + "/mutant~none/none", dir.path(), logs.path()},
      options);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("interrupted: finishing the running cases"), std::string::npos) << r.out;
  const auto verdicts = Verdicts(dir.Join("r.json"));
  EXPECT_GT(verdicts.size(), 0u);
  // After the interrupt only the cases already running end: at most one per
  // worker, and at most one more per worker whose verdict was not printed
  // yet when the script counted.
  const std::size_t at_interrupt =
      std::stoul(flexkit::testing::ReadFileText(logs.Join("at-interrupt")));
  EXPECT_LE(verdicts.size(), at_interrupt + 4) << "cases kept starting after the interrupt\n"
                                               << r.out;
  for (const auto& [name, verdict] : verdicts)
    EXPECT_TRUE(verdict == "PASS" || verdict == "SKIP") << name << ": " << verdict;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename() != "r.json") left.push_back(e.path().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

// --retries: a case that FAILs and then passes is FLAKY, which fails the
// gate unless --allow-flaky; one that FAILs every time stays FAIL. The
// driver ignores `ro` the first time only (a state file outside the case).
TEST(Retries, AFailThatPassesOnRetryIsFlakyAndOneThatRepeatsStaysFail) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  flexkit::testing::TempDir dir("flexconform-retries");
  std::filesystem::create_directories(dir.Join("flaky~ro"));
  const std::string driver = dir.Join("flaky~ro/ro");
  std::ofstream(driver) << "#!/bin/sh\n"
                        << "if [ \"$1\" = mount ] && [ ! -e \"$FLAKY_STATE\" ]; then\n"
                        << "  : > \"$FLAKY_STATE\"; exec " << mutants
                        << "/mutant~ro-ignored/ro-ignored \"$@\"\n"
                        << "fi\n"
                        << "exec " << mutants << "/mutant~none/none \"$@\"\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  auto run = [&](const std::string& which, std::vector<std::string> extra) {
    std::filesystem::remove(dir.Join("state"));
    std::vector<std::string> argv = {flexkit::testing::BuiltBinary("conformance/flexconform"),
                                     "--profile",
                                     mutants + "/profile.yaml",
                                     "--driver",
                                     which,
                                     "--focus",
                                     "^readonly/write-fails\\b",
                                     "--json",
                                     dir.Join("r.json"),
                                     "--run-root",
                                     dir.path()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    flexkit::testing::RunOptions options;
    options.extra_env = {{"FLAKY_STATE", dir.Join("state")}};
    auto r = flexkit::testing::RunProcess(argv, options);
    std::ifstream in(dir.Join("r.json"));
    const auto doc = nlohmann::json::parse(in);
    return std::make_tuple(r.exit_code, doc["cases"][0]["verdict"].get<std::string>(),
                           doc["cases"][0]["reason"].get<std::string>(), r.out);
  };
  auto [once, once_verdict, once_reason, once_out] = run(driver, {});
  EXPECT_EQ(once, 1) << once_out;
  EXPECT_EQ(once_verdict, "FAIL");
  auto [flaky, flaky_verdict, flaky_reason, flaky_out] = run(driver, {"--retries", "2"});
  EXPECT_EQ(flaky, 1) << flaky_out;
  EXPECT_EQ(flaky_verdict, "FLAKY");
  EXPECT_NE(flaky_reason.find("FAILed, then PASS on run 2"), std::string::npos) << flaky_reason;
  EXPECT_NE(flaky_reason.find("a write through"), std::string::npos) << flaky_reason;
  auto [allowed, allowed_verdict, allowed_reason, allowed_out] =
      run(driver, {"--retries", "1", "--allow-flaky"});
  EXPECT_EQ(allowed, 0) << allowed_out;
  EXPECT_EQ(allowed_verdict, "FLAKY");
  auto [always, always_verdict, always_reason, always_out] =
      run(mutants + "/mutant~ro-ignored/ro-ignored", {"--retries", "2"});
  EXPECT_EQ(always, 1) << always_out;
  EXPECT_EQ(always_verdict, "FAIL");
  EXPECT_NE(always_reason.find("FAILed on all 3 runs"), std::string::npos) << always_reason;
}

// --baseline: exit 1 only for what is new; fixed and still-failing cases
// are listed and pass the gate.
TEST(Baseline, OnlyWhatIsNewFailsTheGate) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  flexkit::testing::TempDir dir("flexconform-baseline");
  auto run = [&](const std::string& defect, const std::string& json, const std::string& base) {
    std::vector<std::string> argv = {flexkit::testing::BuiltBinary("conformance/flexconform"),
                                     "--profile",
                                     mutants + "/profile.yaml",
                                     "--driver",
                                     mutants + "/mutant~" + defect + "/" + defect,
                                     "--focus",
                                     "^readonly/",
                                     "--run-root",
                                     dir.path()};
    if (!json.empty()) argv.insert(argv.end(), {"--json", json});
    if (!base.empty()) argv.insert(argv.end(), {"--baseline", base});
    return flexkit::testing::RunProcess(argv);
  };
  ASSERT_EQ(run("none", dir.Join("good.json"), "").exit_code, 0);
  ASSERT_EQ(run("ro-ignored", dir.Join("bad.json"), "").exit_code, 1);
  const auto regressed = run("ro-ignored", "", dir.Join("good.json"));
  EXPECT_EQ(regressed.exit_code, 1) << regressed.out;
  EXPECT_NE(regressed.out.find("new:    readonly/write-fails: FAIL now, PASS in the baseline"),
            std::string::npos)
      << regressed.out;
  const auto same = run("ro-ignored", "", dir.Join("bad.json"));
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("still:  readonly/write-fails"), std::string::npos) << same.out;
  const auto fixed = run("none", "", dir.Join("bad.json"));
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("fixed:  readonly/write-fails"), std::string::npos) << fixed.out;
  std::ofstream(dir.Join("junk.json")) << "{\"cases\": 3}";
  const auto junk = run("none", "", dir.Join("junk.json"));
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_NE(junk.err.find("not a flexconform report"), std::string::npos) << junk.err;
}

// A [sequence] FAIL names the walk's own seed; running that seed alone
// fails again with the same shrunk sequence.
TEST(SequenceReplay, TheReportedSeedReplaysTheFailure) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  auto run = [&mutants](const std::string& walks, const std::string& seed) {
    flexkit::testing::TempDir dir("flexconform-replay");
    flexkit::testing::RunOptions options;
    options.deadline = std::chrono::seconds(120);
    return flexkit::testing::RunProcess(
        {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
         mutants + "/profile.yaml", "--driver",
         mutants + "/mutant~ro-lost-on-remount/ro-lost-on-remount", "--focus", "sequence/random",
         "--random", walks, "--seed", seed, "--run-root", dir.path()},
        options);
  };
  // Seed 2 starts with walks that pass, so the failing walk is not the first.
  auto first = run("6", "2");
  ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
  const std::string hint = "--random 1 --seed ";
  const auto at = first.out.find(hint);
  ASSERT_NE(at, std::string::npos) << first.out;
  const std::string seed = first.out.substr(
      at + hint.size(),
      first.out.find_first_not_of("0123456789", at + hint.size()) - (at + hint.size()));
  auto shrunk = [](const std::string& out) {
    const auto from = out.find("step(s) in ");
    const auto to = out.find(". Step ", from);
    return from == std::string::npos || to == std::string::npos
               ? std::string()
               : out.substr(out.find(": ", from) + 2, to - out.find(": ", from) - 2);
  };
  EXPECT_EQ(shrunk(first.out), "mount(node-1,pod-2:ro) ; mount(node-1,pod-2:ro)") << first.out;
  auto again = run("1", seed);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_NE(again.out.find("random walk 1 of 1 (seed " + seed + ")"), std::string::npos)
      << again.out;
  EXPECT_EQ(shrunk(again.out), shrunk(first.out)) << again.out;
}

// A driver with two bugs (mount ignores ro, unmount is not idempotent) as
// one executable, or with the ro bug fixed: mount and unmount come from the
// mutants that have the bug.
std::string TwoBugDriver(const flexkit::testing::TempDir& dir, const std::string& name,
                         bool ro_fixed) {
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  std::filesystem::create_directories(dir.Join("bugs~" + name));
  const std::string driver = dir.Join("bugs~" + name + "/" + name);
  std::ofstream(driver) << "#!/bin/sh\ncase \"$1\" in\n"
                        << "  mount) exec " << mutants << "/mutant~"
                        << (ro_fixed ? "none/none" : "ro-ignored/ro-ignored") << " \"$@\" ;;\n"
                        << "  unmount) exec " << mutants
                        << "/mutant~unmount-not-idempotent/unmount-not-idempotent \"$@\" ;;\n"
                        << "  *) exec " << mutants << "/mutant~none/none \"$@\" ;;\nesac\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  return driver;
}

flexkit::testing::ProcessResult Flexconform(const flexkit::testing::TempDir& dir,
                                            std::vector<std::string> args) {
  std::vector<std::string> argv = {flexkit::testing::BuiltBinary("conformance/flexconform"),
                                   "--profile", std::string(FLEXKIT_MUTANTS_DIR) + "/profile.yaml",
                                   "--run-root", dir.path()};
  argv.insert(argv.end(), args.begin(), args.end());
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(240);
  return flexkit::testing::RunProcess(argv, options);
}

nlohmann::json ReadReport(const std::string& path) {
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(path), "");
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The same driver against its own report, with random walks and no
// --seed: the walks are the baseline's, so nothing is new.
TEST(Baseline, TheSameDriverWithRandomWalksPassesAgainstItsOwnReport) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-baseline-same");
  const std::string driver =
      std::string(FLEXKIT_MUTANTS_DIR) + "/mutant~ro-lost-on-remount/ro-lost-on-remount";
  const std::vector<std::string> run = {"--driver", driver, "--focus", "^sequence/random\\b",
                                        "--random", "4"};
  auto first = run;
  first.insert(first.end(), {"--json", dir.Join("old.json")});
  ASSERT_EQ(Flexconform(dir, first).exit_code, 1);
  auto again = run;
  again.insert(again.end(), {"--baseline", dir.Join("old.json"), "--json", dir.Join("new.json")});
  const auto r = Flexconform(dir, again);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto old_report = ReadReport(dir.Join("old.json"));
  const auto new_report = ReadReport(dir.Join("new.json"));
  EXPECT_EQ(new_report["run"]["seed"], old_report["run"]["seed"]);
  EXPECT_NE(r.out.find("(the baseline's; --seed " + old_report["run"]["seed"].dump()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0 new, 0 fixed, 1 still failing"), std::string::npos) << r.out;
}

// Fixing one bug never fails the gate: with the ro bug fixed the sequences
// get further and meet the unmount bug, which the baseline saw broken in
// another case. The gate's verdict is in the JSON and JUnit reports.
TEST(Baseline, FixingABugNeverFailsTheGate) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-baseline-fixed");
  const std::vector<std::string> cases = {
      "--focus",  "^(readonly/write-fails|sequence/random|idempotency/teardown-verbs-repeated)\\b",
      "--random", "3",
      "--seed",   "1"};
  auto old_run = cases;
  old_run.insert(old_run.end(),
                 {"--driver", TwoBugDriver(dir, "two", false), "--json", dir.Join("old.json")});
  ASSERT_EQ(Flexconform(dir, old_run).exit_code, 1);
  auto fixed_run = cases;
  fixed_run.insert(fixed_run.end(),
                   {"--driver", TwoBugDriver(dir, "one", true), "--baseline", dir.Join("old.json"),
                    "--json", dir.Join("new.json"), "--junit", dir.Join("new.xml")});
  const auto r = Flexconform(dir, fixed_run);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 new, 1 fixed, 2 still failing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fixed:  readonly/write-fails"), std::string::npos) << r.out;
  const auto report = ReadReport(dir.Join("new.json"));
  std::map<std::string, std::string> verdicts;
  for (const auto& c : report["cases"]) verdicts[c["name"]] = c.value("baseline", "");
  EXPECT_EQ(verdicts["readonly/write-fails"], "fixed");
  EXPECT_EQ(verdicts["sequence/random"], "still failing");
  EXPECT_EQ(verdicts["idempotency/teardown-verbs-repeated"], "still failing");
  const std::string xml = flexkit::testing::ReadFileText(dir.Join("new.xml"));
  EXPECT_NE(xml.find("failures=\"0\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
}

// A driver flooding 16 MiB per call makes a JSON report of kilobytes that
// still says how much it printed.
TEST(Reports, AFloodingDriversJsonReportKeepsTheHeadTailAndSize) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-flood");
  std::filesystem::create_directories(dir.Join("flexkit~flood"));
  const std::string driver = dir.Join("flexkit~flood/flood");
  std::ofstream(driver) << "#!/bin/sh\n"
                        << "[ \"$1\" = init ] || head -c 16000000 /dev/zero | tr '\\0' x >&2\n"
                        << "exec " << FLEXKIT_MUTANTS_DIR << "/mutant~none/none \"$@\"\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  const auto r = Flexconform(dir, {"--driver", driver, "--focus", "^lifecycle/mount-only\\b",
                                   "--json", dir.Join("r.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_LT(std::filesystem::file_size(dir.Join("r.json")), 200000u);
  const auto report = ReadReport(dir.Join("r.json"));
  int flooded = 0;
  for (const auto& e : report["cases"][0]["transcript"])
    flooded += e.value("output_bytes", 0) > 16000000;
  EXPECT_GE(flooded, 2) << "mount and unmount each printed 16 MB";
}

// --quiet prints one line per case that is not PASS and the summary;
// --fail-fast starts no case after the first FAIL.
TEST(ShortRuns, QuietPrintsOnlyWhatIsNotPassAndFailFastStopsAtTheFirstFail) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-quiet");
  const std::string driver = std::string(FLEXKIT_MUTANTS_DIR) + "/mutant~ro-ignored/ro-ignored";
  const auto quiet = Flexconform(dir, {"--driver", driver, "--focus", "^(lifecycle|readonly)/",
                                       "--quiet", "--json", dir.Join("q.json")});
  EXPECT_EQ(quiet.exit_code, 1) << quiet.out;
  const auto report = ReadReport(dir.Join("q.json"));
  std::size_t not_pass = 0;
  for (const auto& c : report["cases"]) not_pass += c["verdict"] != "PASS";
  std::size_t case_lines = 0, lines = 0;
  std::istringstream out(quiet.out);
  for (std::string line; std::getline(out, line); ++lines) {
    if (line.rfind("[", 0) != 0) continue;
    ++case_lines;
    EXPECT_EQ(line.find(" PASS "), std::string::npos) << line;
  }
  EXPECT_EQ(case_lines, not_pass) << quiet.out;
  EXPECT_LE(lines, not_pass + 8) << "one line per case, and the summary\n" << quiet.out;
  const auto fast = Flexconform(dir, {"--driver", driver, "--focus", "^(readonly|lifecycle)/",
                                      "--fail-fast", "-j", "1", "--json", dir.Join("f.json")});
  EXPECT_EQ(fast.exit_code, 1) << fast.out;
  const auto stopped = ReadReport(dir.Join("f.json"));
  EXPECT_LT(stopped["cases"].size(), report["cases"].size());
  EXPECT_EQ(stopped["cases"].back()["verdict"], "FAIL");
  ASSERT_EQ(stopped["notes"].size(), 1u) << fast.out;
  EXPECT_EQ(stopped["notes"][0].get<std::string>().rfind("--fail-fast: stopped after ", 0), 0u);
}

// A driver whose every mount hangs costs the run one full deadline: the
// cases after the first hang give mount a fifth of it, and say so.
// A driver whose mount always fails stops every case that sets a volume
// up before that case's own check: the report says which rules it never
// judged, and a case that does not mount says nothing of the kind.
TEST(ShortRuns, ACaseStoppedBeforeItsOwnCheckSaysWhatItDidNotCheck) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-not-checked");
  std::filesystem::create_directories(dir.Join("flexkit~nomount"));
  const std::string driver = dir.Join("flexkit~nomount/nomount");
  std::ofstream(driver)
      << "#!/bin/sh\n[ \"$1\" = mount ] && { "
      << "echo '{\"status\":\"Failure\",\"message\":\"backend down\"}'; exit 1; }\n"
      << "exec " << FLEXKIT_MUTANTS_DIR << "/mutant~none/none \"$@\"\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  const auto r = Flexconform(
      dir, {"--driver", driver, "--focus", "^(readonly/write-fails|protocol/init-reply)\\b",
            "--json", dir.Join("r.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = ReadReport(dir.Join("r.json"));
  std::map<std::string, std::string> not_checked;
  for (const auto& c : report["cases"])
    not_checked[c["name"]] = c.value("not_checked", std::string());
  EXPECT_EQ(not_checked["readonly/write-fails"].rfind("F18: the case stopped at ", 0), 0u)
      << not_checked["readonly/write-fails"];
  EXPECT_NE(not_checked["readonly/write-fails"].find(" in mount, before its own checks"),
            std::string::npos);
  EXPECT_EQ(not_checked["protocol/init-reply"], "");
  EXPECT_NE(r.out.find("    not checked: F18"), std::string::npos) << r.out;
}

TEST(ShortRuns, AVerbThatHungGetsAShorterDeadlineInTheCasesAfter) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-hang");
  std::filesystem::create_directories(dir.Join("flexkit~hang"));
  const std::string driver = dir.Join("flexkit~hang/hang");
  std::ofstream(driver) << "#!/bin/sh\n[ \"$1\" = mount ] && exec sleep 600\n"
                        << "exec " << FLEXKIT_MUTANTS_DIR << "/mutant~none/none \"$@\"\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  const auto r = Flexconform(dir, {"--driver", driver, "--timeout", "10s", "-j", "1", "--focus",
                                   "^(lifecycle/mount-only|idempotency/setup-verbs-repeated|"
                                   "readonly/write-fails)\\b",
                                   "--json", dir.Join("r.json")});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_LT(took, std::chrono::seconds(25)) << "one 10 s hang, then 2 s ones";
  const auto report = ReadReport(dir.Join("r.json"));
  ASSERT_EQ(report["notes"].size(), 1u) << r.out;
  const std::string note = report["notes"][0];
  EXPECT_NE(note.find("mount hung (still running after 10 s) in "), std::string::npos) << note;
  EXPECT_NE(note.find("gave mount 2 s, not 10 s; 2 more mount call(s) hung"), std::string::npos)
      << note;
  int explained = 0;
  for (const auto& c : report["cases"]) {
    for (const auto& f : c["findings"]) {
      const std::string why = f["why"];
      explained +=
          why.find("mount still running after 2000 ms") != std::string::npos &&
          why.find("(flexconform gave mount 2 s, not 10 s: it already hung for 10 s in ") !=
              std::string::npos;
    }
  }
  EXPECT_EQ(explained, 2) << r.out;
}

}  // namespace
