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

}  // namespace
}  // namespace flexkit::conform
