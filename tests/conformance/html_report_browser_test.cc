// flexconform --html in a real browser: a report made by the report code
// is opened in headless Chromium (through Selenium and chromedriver), its
// filters are clicked as a person would, and what is shown after each
// click is checked: the case sections and summary rows left visible.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "conformance/html_report.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

using Json = nlohmann::ordered_json;

Json Call(const std::string& verb, int exit_code, const std::string& status) {
  Json c;
  c["type"] = "call";
  c["node"] = "node-1";
  c["component"] = "kubelet";
  c["verb"] = verb;
  c["argv"] = {"/drv", verb, "/pods/p", R"({"kubernetes.io/readwrite":"ro"})"};
  c["executed"] = true;
  c["exit_code"] = exit_code;
  c["output"] =
      Json::array({Json{{"stream", "stdout"}, {"bytes", R"({"status":")" + status + R"("})"}}});
  c["verdict"] = Json{{"outcome", exit_code == 0 ? "success" : "failure"}};
  return c;
}

CaseResult Case(const std::string& name, const std::string& tag, Grade grade) {
  CaseResult r;
  r.name = name;
  r.tags = {tag};
  r.grade = grade;
  r.transcript.push_back(Call("mount", 0, "Success"));
  if (grade == Grade::kFail || grade == Grade::kFlaky) {
    r.transcript.push_back(Call("unmount", 1, "Failure"));
    AddFinding(
        r, {Grade::kFail, "F18 read-only: readwrite=ro mounts read-only", "a write succeeded", 0});
    r.grade = grade;
  }
  if (grade == Grade::kSkip) r.reason = "capability: attach:false";
  if (grade == Grade::kWarn) r.reason = "Not supported with exit 1";
  return r;
}

// In run order: case-0 PASS, case-1 FAIL, case-2 SKIP, case-3 WARN, case-4 FLAKY.
RunSummary FiveVerdicts() {
  RunSummary s;
  s.results = {Case("lifecycle/attachable", "lifecycle", Grade::kPass),
               Case("readonly/write-fails", "readonly", Grade::kFail),
               Case("teardown/detach-never-attached", "teardown", Grade::kSkip),
               Case("protocol/unknown-verb", "protocol", Grade::kWarn),
               Case("secrets/accepted", "secrets", Grade::kFlaky)};
  return s;
}

TEST(HtmlReportBrowser, ClickingTheFiltersShowsExactlyTheChosenCases) {
  const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  flexkit::testing::TempDir dir;
  const std::string page = dir.Join("report.html");
  std::ofstream(page) << HtmlReport(FiveVerdicts(), "/drv", "none");

  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(30);
  const auto r = flexkit::testing::RunProcess(
      {python, FLEXKIT_CLICKS_SCRIPT, page, dir.Join("chromium-profile"), "button:failures",
       "verdict:PASS", "button:all", "tag:readonly", "verdict:WARN"},
      options);
  if (r.exit_code == 77) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  std::vector<Json> shown;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) shown.push_back(Json::parse(line));
  ASSERT_EQ(shown.size(), 6u) << r.out;
  const auto expect = [&](std::size_t step, std::vector<std::string> sections,
                          std::vector<std::string> rows) {
    EXPECT_EQ(shown[step]["sections"], Json(sections)) << "after click " << step;
    EXPECT_EQ(shown[step]["rows"], Json(rows)) << "after click " << step;
    EXPECT_EQ(shown[step]["visible"], std::to_string(sections.size())) << "after click " << step;
  };
  // As loaded: everything, failures first.
  expect(0, {"case-1", "case-4", "case-3", "case-0", "case-2"},
         {"readonly/write-fails", "secrets/accepted", "protocol/unknown-verb",
          "lifecycle/attachable", "teardown/detach-never-attached"});
  // "Failures only": FAIL and FLAKY.
  expect(1, {"case-1", "case-4"}, {"readonly/write-fails", "secrets/accepted"});
  // PASS ticked as well.
  expect(2, {"case-1", "case-4", "case-0"},
         {"readonly/write-fails", "secrets/accepted", "lifecycle/attachable"});
  // "All" again.
  expect(3, {"case-1", "case-4", "case-3", "case-0", "case-2"},
         {"readonly/write-fails", "secrets/accepted", "protocol/unknown-verb",
          "lifecycle/attachable", "teardown/detach-never-attached"});
  // Tag readonly unticked: its case goes; then WARN unticked.
  expect(4, {"case-4", "case-3", "case-0", "case-2"},
         {"secrets/accepted", "protocol/unknown-verb", "lifecycle/attachable",
          "teardown/detach-never-attached"});
  expect(5, {"case-4", "case-0", "case-2"},
         {"secrets/accepted", "lifecycle/attachable", "teardown/detach-never-attached"});
}

}  // namespace
}  // namespace flexkit::conform
