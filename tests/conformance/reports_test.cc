#include "conformance/reports.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "conformance/html_report.h"
#include "conformance/rules.h"
#include "tests/support/report_schema.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

RunSummary Sample() {
  RunSummary s;
  CaseResult pass;
  pass.name = "protocol/a";
  CaseResult fail;
  fail.name = "secrets/b";
  fail.grade = Grade::kFail;
  fail.rule = "F21";
  fail.reason = "reply has <secret> & \"quotes\"";
  fail.transcript = nlohmann::ordered_json::parse(
      R"([{"type":"call","node":"node-1","verb":"mount","argv":["/d","mount","/p"],"exit_code":1,
           "output":[{"stream":"stdout","bytes":"{\"status\":\"Failure\"}"}],"verdict":{"outcome":"failure","error":"boom"},
           "harness_problem":null,"mounts_added":[],"mounts_removed":[]}])");
  CaseResult skip;
  skip.name = "lifecycle/c";
  skip.grade = Grade::kSkip;
  skip.reason = "capability: attach:false";
  CaseResult warn;
  warn.name = "protocol/d";
  warn.grade = Grade::kWarn;
  warn.reason = "Not supported with exit 1";
  s.results = {pass, fail, skip, warn};
  return s;
}

RunInfo Info() {
  RunInfo info;
  info.driver = "/d";
  info.driver_name = "acme/d";
  info.driver_sha256 = std::string(64, 'a');
  info.kubernetes = "current";
  info.fixture = "none";
  info.seed = 42;
  info.hostname = "ci-7";
  info.started = "2026-12-01T10:00:00Z";
  return info;
}

// JUnit's failure text carries the fix hint of each finding's rule, as the
// console's summary does: a CI page shows what to change.
TEST(Reports, JunitCarriesEachFindingsFixHint) {
  RunSummary s;
  CaseResult r;
  r.name = "readonly/reformat";
  AddFinding(r, {Grade::kFail, "F19 never-reformat: an existing filesystem is never reformatted",
                 "mountdevice made a new ext4 on /dev/loop3"});
  AddFinding(r, {Grade::kFail, "F26 no-leaks: a case leaves nothing behind", "loop device left"});
  s.results = {r};
  const std::string xml = JunitXml(s, Info());
  const auto failure = xml.find("<failure ");
  ASSERT_NE(failure, std::string::npos) << xml;
  const std::string body = xml.substr(failure);
  EXPECT_NE(body.find("never reformatted: mountdevice made a new ext4 on /dev/loop3\n  fix: " +
                      FixHint("F19 never-reformat")),
            std::string::npos)
      << xml;
  EXPECT_NE(body.find("  fix: " + FixHint("F26 no-leaks")), std::string::npos) << xml;
}

// A case a set-up call's defect stopped, as the runner leaves it.
CaseResult StoppedCase() {
  CaseResult r;
  r.name = "readonly/write-fails";
  AddFinding(r, {Grade::kFail, "F8 mount-works: a mount that succeeds mounts", "mount failed"});
  r.not_checked = "F18: the case stopped at call 2 in mount, before <its> own checks";
  return r;
}

// A stopped case says in JUnit what it did not check, as the console does:
// a CI page shows what is not graded yet.
TEST(Reports, JunitSaysWhatAStoppedCaseDidNotCheck) {
  RunSummary s;
  s.results = {StoppedCase()};
  const std::string xml = JunitXml(s, Info());
  const auto failure = xml.find("<failure ");
  ASSERT_NE(failure, std::string::npos) << xml;
  EXPECT_NE(xml.find("not checked: F18: the case stopped at call 2 in mount", failure),
            std::string::npos)
      << xml;
}

// The HTML report's FAIL box of a stopped case says which rule it never judged.
TEST(Reports, HtmlSaysWhatAStoppedCaseDidNotCheck) {
  RunSummary run;
  run.results = {StoppedCase()};
  const std::string html = HtmlReport(run, "/drv", "none");
  const auto box = html.find("<div class=\"failure\">");
  ASSERT_NE(box, std::string::npos) << html;
  const std::string failure = html.substr(box, html.find("</div>", box) - box);
  EXPECT_NE(failure.find("<b>Not checked:</b> F18: the case stopped at call 2 in mount, before "
                         "&lt;its&gt; own checks"),
            std::string::npos)
      << failure;
}

// What Jenkins, GitLab and GitHub show of a suite: its name, properties,
// timestamp and hostname; a WARN as a property and system-out.
TEST(Reports, JunitNamesTheDriverAndCarriesTheRunAsProperties) {
  const std::string xml = JunitXml(Sample(), Info());
  EXPECT_NE(xml.find("<testsuite name=\"flexconform: acme/d\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("timestamp=\"2026-12-01T10:00:00Z\" hostname=\"ci-7\""), std::string::npos)
      << xml;
  for (const std::string& property : std::vector<std::string>{
           "name=\"driver\" value=\"/d\"", "name=\"driver.sha256\" value=\"" + std::string(64, 'a'),
           "name=\"flexconform.version\" value=\"" + std::string(FLEXKIT_VERSION),
           "name=\"kubernetes\" value=\"current\"", "name=\"seed\" value=\"42\"",
           "name=\"profile\" value=\"\""})
    EXPECT_NE(xml.find("<property " + property), std::string::npos) << property << "\n" << xml;
  EXPECT_NE(xml.find("<property name=\"verdict\" value=\"WARN\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<system-out>WARN: Not supported with exit 1</system-out>"),
            std::string::npos);
}

TEST(Reports, JsonCarriesTheSchemaVersionToolRunAndCounts) {
  auto doc = nlohmann::json::parse(JsonReport(Sample(), Info()));
  EXPECT_EQ(doc["schemaVersion"], kReportSchemaVersion);
  EXPECT_EQ(doc["tool"]["version"], FLEXKIT_VERSION);
  EXPECT_EQ(doc["run"]["seed"], 42);
  EXPECT_EQ(doc["run"]["driverSha256"], std::string(64, 'a'));
  EXPECT_EQ(doc["summary"], nlohmann::json::parse(R"({"cases":4,"passed":1,"failed":1,
      "warned":1,"skipped":1,"errors":0,"flaky":0})"));
}

// Workers, merged shards and baselines all read results back from JSON, so
// a result must come back as it went in.
TEST(Reports, ACaseResultSurvivesTheJsonRoundTrip) {
  CaseResult r = Sample().results[1];
  r.tags = {"secrets", "root"};
  AddFinding(r, {Grade::kError, "harness", "setting up: boom"});
  r.warnings = {"odd"};
  r.duration = std::chrono::milliseconds(1234);
  r.driver_time = std::chrono::milliseconds(99);
  r.timeline.calls = {CallWindow{1, 2}};
  r.timeline.backend = {BackendEvent{"cloud", 1, 2, 200, "POST", "/v1/x"}};
  AddFinding(r, {Grade::kFail, "F18", "writable although ro", 0});
  const auto json = ResultToJson(r);
  const CaseResult back = ResultFromJson(nlohmann::ordered_json::parse(json.dump()));
  EXPECT_EQ(ResultToJson(back), json);
  EXPECT_EQ(back.grade, Grade::kFail);
  EXPECT_EQ(back.findings.size(), FindingsOf(r).size());
  ASSERT_EQ(back.findings.size(), 2u);
  EXPECT_FALSE(back.findings[0].call) << "the harness error judged no call";
  EXPECT_EQ(back.findings[1].call, std::optional<std::size_t>(0)) << "the call at fault";
  auto broken = json;
  broken.erase("verdict");
  try {
    ResultFromJson(broken);
    ADD_FAILURE() << "a result without a verdict was read";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("secrets/b"), std::string::npos) << e.what();
  }
}

TEST(Reports, JunitHasOneTestcasePerCaseWithSkippedAndFailureElements) {
  const std::string xml = JunitXml(Sample(), Info());
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"capability: attach:false\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"F21: reply has &lt;secret&gt; &amp; &quot;quotes&quot;\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("/d mount /p"), std::string::npos) << "the failure shows the calls";
  EXPECT_EQ(xml.find("<secret>"), std::string::npos) << "escaped";
}

TEST(Reports, JsonListsEveryCaseWithVerdictAndTranscript) {
  auto doc = nlohmann::json::parse(JsonReport(Sample(), Info()));
  ASSERT_EQ(doc["cases"].size(), 4u);
  EXPECT_EQ(doc["cases"][1]["verdict"], "FAIL");
  EXPECT_EQ(doc["cases"][1]["transcript"][0]["verb"], "mount");
  EXPECT_EQ(doc["cases"][2]["verdict"], "SKIP");
  EXPECT_EQ(doc["cases"][3]["verdict"], "WARN");
}

TEST(Reports, ConsoleHasNoColourWhenNotATerminal) {
  std::ostringstream out;
  ConsoleReporter console(out, false);
  auto s = Sample();
  for (std::size_t i = 0; i < s.results.size(); ++i)
    console.CaseFinished(s.results[i], i, s.results.size());
  console.Summary(s);
  EXPECT_EQ(out.str().find('\033'), std::string::npos);
  EXPECT_NE(out.str().find("[2/4] FAIL secrets/b"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("rule: F21"), std::string::npos);
  EXPECT_NE(out.str().find("1 passed, 1 failed, 1 warned, 1 skipped"), std::string::npos)
      << out.str();
}

TEST(Reports, ConsoleColoursOnATerminal) {
  std::ostringstream out;
  ConsoleReporter console(out, true);
  auto s = Sample();
  console.CaseFinished(s.results[1], 1, 4);
  EXPECT_NE(out.str().find("\033[31;1mFAIL\033[0m"), std::string::npos);
}

// Every rule a case broke is shown, and the summary counts distinct rules.
TEST(Reports, EveryFindingIsShownAndDistinctRulesCounted) {
  RunSummary s;
  CaseResult a;
  a.name = "readonly/a";
  AddFinding(a, {Grade::kFail, "F1", "mount: stray stderr"});
  AddFinding(a, {Grade::kFail, "F18", "writable although ro"});
  AddFinding(a, {Grade::kFail, "F1", "mount: stray stderr"});  // a repeat is kept once
  CaseResult b;
  b.name = "lifecycle/b";
  AddFinding(b, {Grade::kFail, "F1", "mount: stray stderr again"});
  CaseResult e;
  e.name = "install/e";
  AddFinding(e, {Grade::kError, "harness", "the case stopped: boom"});
  s.results = {a, b, e};
  EXPECT_EQ(a.grade, Grade::kFail);
  EXPECT_EQ(a.rule, "F1");
  EXPECT_EQ(a.findings.size(), 2u);
  EXPECT_EQ(RulesBroken(a), (std::vector<std::string>{"F1", "F18"}));
  EXPECT_EQ(e.grade, Grade::kError);
  EXPECT_EQ(s.ExitCode(), 1);
  s.results = {e};
  EXPECT_EQ(s.ExitCode(), 2) << "a harness error is no verdict on the driver";
  s.results = {a, b, e};

  auto doc = nlohmann::json::parse(JsonReport(s, Info()));
  EXPECT_EQ(doc["cases"][0]["rules"], nlohmann::json::array({"F1", "F18"}));
  EXPECT_EQ(doc["cases"][0]["findings"].size(), 2u);
  EXPECT_EQ(doc["cases"][2]["verdict"], "ERROR");
  ASSERT_EQ(doc["rules_broken"].size(), 2u);
  EXPECT_EQ(doc["rules_broken"][0]["rule"], "F1");
  EXPECT_EQ(doc["rules_broken"][0]["cases"], nlohmann::json::array({"readonly/a", "lifecycle/b"}));

  const std::string xml = JunitXml(s, Info());
  EXPECT_NE(xml.find("failures=\"2\" errors=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("message=\"F1: mount: stray stderr | F18: writable although ro\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"harness: the case stopped: boom\""), std::string::npos)
      << xml;

  std::ostringstream out;
  ConsoleReporter console(out, false);
  console.CaseFinished(s.results[0], 0, 3);
  console.Summary(s);
  EXPECT_NE(out.str().find("rule: F18"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("2 distinct rules broken"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("F1: 2 cases"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 harness errors"), std::string::npos) << out.str();
}

// The report, with a finding that names its call, is what the schema says.
TEST(Reports, JsonReportWithTheCallAtFaultMatchesTheSchema) {
  auto s = Sample();
  AddFinding(s.results[1], {Grade::kFail, "F21", "reply has the secret", 0});
  const auto doc = nlohmann::json::parse(JsonReport(s, Info()));
  EXPECT_EQ(doc["cases"][1]["findings"][0]["call"], 0);
  EXPECT_FALSE(doc["cases"][0].contains("call"));
  flexkit::testing::TempDir dir;
  const std::string path = dir.Join("report.json");
  WriteReport(path, JsonReport(s, Info()));
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(path), "");
}

// Printed argv: the options a rule is about survive shortening whole;
// other values are cut instead, and nothing is cut when it fits.
TEST(PrintedArgv, KeepsTheRuleKeysWholeAndShortensOtherValues) {
  const std::string options =
      R"({"kubernetes.io/fsType":"xfs","kubernetes.io/pvOrVolumeName":"vol-1",)"
      R"("kubernetes.io/readwrite":"ro","kubernetes.io/secret/password":"<redacted>",)"
      R"("share":")" +
      std::string(2000, 'x') + R"(","zone":")" + std::string(500, 'z') + R"("})";
  const std::vector<std::string> argv = {"/drv", "mount", "/var/lib/kubelet/pods/p/vol", options};
  const std::string printed = PrintedArgv(argv, 300);
  EXPECT_LE(printed.size(), 300u) << printed;
  for (const char* kept : {R"("kubernetes.io/fsType":"xfs")", R"("kubernetes.io/readwrite":"ro")",
                           R"("kubernetes.io/secret/password":"<redacted>")", R"("share":")",
                           R"("zone":")", "(2000 bytes)", "(500 bytes)", "/drv mount "})
    EXPECT_NE(printed.find(kept), std::string::npos) << kept << "\n" << printed;
  EXPECT_EQ(printed.find(std::string(100, 'x')), std::string::npos) << printed;

  const std::vector<std::string> small = {"/drv", "mount", "/p",
                                          R"({"kubernetes.io/readwrite":"rw"})"};
  EXPECT_EQ(PrintedArgv(small, 300), "/drv mount /p {\"kubernetes.io/readwrite\":\"rw\"}");

  // A long value that is not JSON is cut, with its size.
  const std::string plain = PrintedArgv({"/drv", "mount", std::string(1000, 'p')}, 100);
  EXPECT_NE(plain.find("(1000 bytes)"), std::string::npos) << plain;
  EXPECT_LE(plain.size(), 100u) << plain;
}

// The console's call lines (and so JUnit's) print argv that way.
TEST(PrintedArgv, FormatCallsKeepsTheReadwriteKeyOfALongOptionsJson) {
  nlohmann::ordered_json call = Sample().results[1].transcript[0];
  call["argv"] = {"/d", "mount", "/p",
                  R"({"a":")" + std::string(3000, 'a') + R"(","kubernetes.io/readwrite":"ro"})"};
  const std::string printed = FormatCalls(nlohmann::ordered_json::array({call}));
  EXPECT_NE(printed.find(R"("kubernetes.io/readwrite":"ro")"), std::string::npos) << printed;
  EXPECT_NE(printed.find("(3000 bytes)"), std::string::npos) << printed;
  EXPECT_LT(printed.size(), 1200u) << printed;
}

CaseResult Failed(const std::string& name, std::vector<std::string> rules) {
  CaseResult r;
  r.name = name;
  for (const auto& rule : rules) AddFinding(r, {Grade::kFail, rule, "why"});
  return r;
}

CaseResult Passed(const std::string& name) {
  CaseResult r;
  r.name = name;
  return r;
}

// Fixing a bug never fails the gate: a case that now gets further and
// meets a defect the baseline saw elsewhere is still failing, not new.
TEST(Baseline, ARuleBrokenAnywhereInTheBaselineIsStillFailingNotNew) {
  const std::vector<CaseResult> before = {
      Failed("readonly/write-fails", {"F18 (protocol §7: ro is honoured)"}),
      Failed("sequence/exhaustive", {"F18 (protocol §7: ro is honoured)"}),
      Failed("idempotency/unmount", {"F10 (protocol §7: unmount is idempotent)"}),
      Passed("lifecycle/mount-only")};
  // The ro bug fixed: the sequence gets further and meets the known F10;
  // a case that passed now breaks F10 too (cited differently).
  const std::vector<CaseResult> now = {
      Passed("readonly/write-fails"),
      Failed("sequence/exhaustive", {"F10 (protocol §7: unmount is idempotent)"}),
      Failed("idempotency/unmount", {"F10 (protocol §7: unmount is idempotent)"}),
      Failed("lifecycle/mount-only", {"F10 (rules R7: unmount is idempotent)"})};
  const auto diff = CompareWithBaseline(before, now);
  EXPECT_TRUE(diff.new_failures.empty()) << diff.new_failures.front();
  EXPECT_EQ(diff.fixed, std::vector<std::string>{"readonly/write-fails"});
  ASSERT_EQ(diff.still_failing.size(), 3u);
  EXPECT_EQ(diff.still_failing[0], "sequence/exhaustive");
  EXPECT_EQ(diff.still_failing[2],
            "lifecycle/mount-only: FAIL now, PASS in the baseline; every rule it breaks is broken "
            "there too (F10 (rules R7: unmount is idempotent), in idempotency/unmount)");
  EXPECT_EQ(diff.verdicts.at("lifecycle/mount-only"), BaselineVerdict::kStillFailing);
  // A rule the baseline never saw broken is new, wherever it is.
  const auto worse = CompareWithBaseline(
      before, {Failed("idempotency/unmount", {"F10 (protocol §7: unmount is idempotent)",
                                              "F11 (protocol §7: unmount leaves nothing mounted)"}),
               Failed("lifecycle/mount-only", {"F4 (protocol §3: Success exits 0)"})});
  EXPECT_EQ(worse.new_failures,
            (std::vector<std::string>{
                "idempotency/unmount: newly breaks F11 (protocol §7: unmount leaves nothing "
                "mounted)",
                "lifecycle/mount-only: FAIL now, PASS in the baseline (F4 (protocol §3: Success "
                "exits 0))"}));
  EXPECT_EQ(RuleIdentity("F9 (protocol §7: mount is idempotent)"), "F9: mount is idempotent");
  EXPECT_EQ(RuleIdentity("protocol §7: teardown succeeds"), "teardown succeeds");
}

// The gate's verdict is in the reports a CI reads: JUnit fails only what
// is new (its failure count is the gate's), JSON says new/still/fixed.
TEST(Baseline, TheVerdictGoesIntoJunitAndJson) {
  RunSummary s;
  s.results = {Failed("idempotency/unmount", {"F10 (protocol §7: unmount is idempotent)"}),
               Failed("lifecycle/mount-only", {"F4 (protocol §3: Success exits 0)"}),
               Passed("readonly/write-fails")};
  RunInfo info = Info();
  info.baseline = CompareWithBaseline(
      {Failed("idempotency/unmount", {"F10 (protocol §7: unmount is idempotent)"}),
       Failed("readonly/write-fails", {"F18 (protocol §7: ro is honoured)"}),
       Passed("lifecycle/mount-only")},
      s.results);
  info.baseline->file = "old.json";
  const std::string xml = JunitXml(s, info);
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"new against the baseline: F4"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"verdict\" value=\"FAIL\"/><property name=\"baseline\" "
                     "value=\"still failing\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<system-out>FAIL, still failing: every rule it breaks is broken in the "
                     "baseline old.json"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"baseline\" value=\"fixed\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"baseline.new\" value=\"1\"/>"), std::string::npos) << xml;
  const auto doc = nlohmann::json::parse(JsonReport(s, info));
  EXPECT_EQ(doc["baseline"]["report"], "old.json");
  EXPECT_EQ(doc["baseline"]["new"].size(), 1u);
  EXPECT_EQ(doc["baseline"]["fixed"], nlohmann::json::parse(R"(["readonly/write-fails"])"));
  EXPECT_EQ(doc["cases"][0]["baseline"], "still failing");
  EXPECT_EQ(doc["cases"][1]["baseline"], "new");
  EXPECT_EQ(doc["cases"][2]["baseline"], "fixed");
  flexkit::testing::TempDir dir;
  const std::string path = dir.Join("r.json");
  WriteReport(path, JsonReport(s, info));
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(path), "");
}

// A flooding driver's output is kept at its head and tail, with its size.
TEST(Reports, ACallsOutputIsClippedToItsHeadAndTailWithItsSize) {
  CaseResult r = Sample().results[1];
  const std::string flood = "HEAD" + std::string(1 << 20, 'x') + "TAIL";
  r.transcript[0]["output"] = nlohmann::ordered_json::array(
      {{{"stream", "combined"}, {"bytes", "{}"}}, {{"stream", "combined"}, {"bytes", flood}}});
  const auto json = ResultToJson(r);
  const auto& call = json["transcript"][0];
  EXPECT_EQ(call["output_bytes"], flood.size() + 2);
  std::string kept;
  for (const auto& c : call["output"]) kept += c["bytes"].get<std::string>();
  EXPECT_LT(kept.size(), 17000u);
  EXPECT_EQ(kept.rfind("{}HEAD", 0), 0u);
  EXPECT_EQ(kept.substr(kept.size() - 4), "TAIL");
  EXPECT_NE(kept.find("[flexconform left out " + std::to_string(flood.size() + 2 - 16384) + " of " +
                      std::to_string(flood.size() + 2) + " bytes of output here]"),
            std::string::npos);
  // Read back (from a worker, a shard) and written again, it stays as it was.
  EXPECT_EQ(ResultToJson(ResultFromJson(json))["transcript"], json["transcript"]);
  // A short output is kept whole.
  EXPECT_FALSE(ResultToJson(Sample().results[1])["transcript"][0].contains("output_bytes"));
}

// --quiet: nothing for a PASS, one line for anything else.
TEST(Reports, QuietConsolePrintsOneLinePerCaseThatIsNotPass) {
  std::ostringstream out;
  ConsoleReporter console(out, false, true);
  const auto s = Sample();
  for (std::size_t i = 0; i < s.results.size(); ++i) console.CaseFinished(s.results[i], i, 4);
  EXPECT_EQ(out.str(),
            "[2/4] FAIL secrets/b: F21: reply has <secret> & \"quotes\"\n"
            "[3/4] SKIP lifecycle/c: capability: attach:false\n"
            "[4/4] WARN protocol/d: Not supported with exit 1\n");
}

}  // namespace
}  // namespace flexkit::conform
