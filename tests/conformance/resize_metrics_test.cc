// [resize], [metrics] and [selinux] against the shell driver in resize/:
// the control passes every case, and each one-defect mutant is graded FAIL
// (or WARN) on exactly the expected cases; the probe-storm mutant fails the
// per-call rule in every case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/report_schema.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

struct ResizeMutant {
  std::string defect;
  std::map<std::string, std::string> expected;  // case -> FAIL or WARN; the rest PASS or SKIP
};

void PrintTo(const ResizeMutant& m, std::ostream* os) { *os << m.defect; }

class ResizeMetricsTest : public ::testing::TestWithParam<ResizeMutant> {};

TEST_P(ResizeMetricsTest, IsGradedOnExactlyTheExpectedCases) {
  FLEXKIT_REQUIRE_ROOT();
  const ResizeMutant& m = GetParam();
  flexkit::testing::TempDir dir("flexconform-resize");
  // A copy, so what a mutant writes beside itself stays out of the tree.
  const std::string drivers = dir.Join("drivers");
  std::filesystem::copy(
      FLEXKIT_RESIZE_DRIVERS_DIR, drivers,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(120);
  auto r = flexkit::testing::RunProcess(
      {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
       drivers + "/profile.yaml", "--driver", drivers + "/resize~" + m.defect + "/" + m.defect,
       "--json", dir.Join("r.json"), "--run-root", dir.path(), "--focus",
       "^(resize|metrics|selinux)/"},
      options);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(dir.Join("r.json")), "");
  std::ifstream in(dir.Join("r.json"));
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str());
  std::map<std::string, std::string> graded;
  std::size_t ran = 0;
  for (const auto& c : doc["cases"]) {
    const std::string verdict = c["verdict"];
    if (verdict == "FAIL" || verdict == "WARN") graded[c["name"]] = verdict;
    if (verdict != "SKIP") ++ran;
  }
  EXPECT_EQ(graded, m.expected) << r.out;
  EXPECT_GE(ran, 2u) << "the cases must run, not skip: " << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Drivers, ResizeMetricsTest,
    ::testing::Values(ResizeMutant{"none", {}},
                      // A bind of a directory on the node's disk: the pod dir
                      // is the volume, on the filesystem of kubelet's dir.
                      ResizeMutant{"node-disk-dir", {}},
                      ResizeMutant{"expandfs-no-grow",
                                   {{"resize/expandfs-online", "FAIL"},
                                    {"resize/expandfs-during-mount", "FAIL"}}},
                      ResizeMutant{"metrics-ignores-size",
                                   {{"metrics/statfs-reports-the-volume", "FAIL"}}},
                      ResizeMutant{"ramfs", {{"selinux/relabel-needs-labels", "WARN"}}},
                      // Probe storms are a rule of every call, so every case sees it.
                      ResizeMutant{"logs-in-plugin-dir",
                                   {{"resize/expandfs-online", "FAIL"},
                                    {"resize/expandfs-during-mount", "FAIL"},
                                    {"resize/expandvolume-direct-call", "FAIL"},
                                    {"metrics/statfs-reports-the-volume", "FAIL"},
                                    {"selinux/relabel-needs-labels", "FAIL"}}}),
    [](const ::testing::TestParamInfo<ResizeMutant>& param) {
      std::string name = param.param.defect;
      for (auto& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

}  // namespace
