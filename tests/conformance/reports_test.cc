#include "conformance/reports.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

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

TEST(Reports, JunitHasOneTestcasePerCaseWithSkippedAndFailureElements) {
  const std::string xml = JunitXml(Sample(), "flexconform");
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
  auto doc = nlohmann::json::parse(JsonReport(Sample(), "/d"));
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
  AddFinding(a, {Grade::kFail, "F1", "mount: stray stderr"});  // the same once
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

  auto doc = nlohmann::json::parse(JsonReport(s, "/d"));
  EXPECT_EQ(doc["cases"][0]["rules"], nlohmann::json::array({"F1", "F18"}));
  EXPECT_EQ(doc["cases"][0]["findings"].size(), 2u);
  EXPECT_EQ(doc["cases"][2]["verdict"], "ERROR");
  ASSERT_EQ(doc["rules_broken"].size(), 2u);
  EXPECT_EQ(doc["rules_broken"][0]["rule"], "F1");
  EXPECT_EQ(doc["rules_broken"][0]["cases"], nlohmann::json::array({"readonly/a", "lifecycle/b"}));

  const std::string xml = JunitXml(s, "flexconform");
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

}  // namespace
}  // namespace flexkit::conform
