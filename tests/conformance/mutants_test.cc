// Proof that the suite catches what it claims: each driver in mutants/ is
// the correct shell driver with exactly one defect, and flexconform must
// grade it FAIL (or WARN) on exactly the expected cases, and PASS or SKIP
// every other one. `none` is the control: the same driver without a defect.
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

struct Mutant {
  std::string defect;
  std::map<std::string, std::string>
      expected;  // case -> FAIL or WARN; every other case PASS or SKIP
};

void PrintTo(const Mutant& m, std::ostream* os) { *os << m.defect; }

const std::vector<Mutant>& Mutants() {
  static const std::vector<Mutant> mutants = {
#include "mutants/expected.inc"
  };
  return mutants;
}

class MutantTest : public ::testing::TestWithParam<Mutant> {};

TEST_P(MutantTest, IsCaughtOnExactlyTheExpectedCases) {
  FLEXKIT_REQUIRE_ROOT();
  const Mutant& m = GetParam();
  flexkit::testing::TempDir dir("flexconform-mutant");
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(180);
  // attach-*: the attachable driver (mutant-attach-driver.sh), whose tmpfs
  // "device" suits the [sequence], [readonly] and [failure] cases only.
  const bool attachable = m.defect.rfind("attach-", 0) == 0;
  auto r = flexkit::testing::RunProcess(
      {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
       mutants + (attachable ? "/profile-attach.yaml" : "/profile.yaml"), "--driver",
       mutants + "/mutant~" + m.defect + "/" + m.defect, "--json", dir.Join("r.json"), "--run-root",
       dir.path(), "--focus", attachable ? "^(sequence|readonly|failure)/" : ".",
       // [sequence]: a fixed seed keeps the random walks, and so the
       // expectations, the same on every run; three walks are enough to
       // catch every sequence mutant and keep the shell drivers quick.
       "--seed", "1", "--random", "3"},
      options);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(dir.Join("r.json")), "");
  std::ifstream in(dir.Join("r.json"));
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str());
  std::map<std::string, std::string> graded;
  for (const auto& c : doc["cases"]) {
    const std::string verdict = c["verdict"];
    if (verdict == "FAIL" || verdict == "WARN") graded[c["name"]] = verdict;
  }
  EXPECT_EQ(graded, m.expected) << r.out;
  // The credentials files that mutant leaves under random names, which
  // flexconform reports and keeps (a file holding a secret may be a log).
  if (m.defect == "credentials-file-left") {
    for (const auto& e : std::filesystem::directory_iterator("/tmp")) {
      if (e.path().filename().string().rfind("flexkit-mutant-creds.", 0) == 0)
        std::filesystem::remove(e.path());
    }
  }
  // Nothing flexconform made (planted user files, canaries, node dirs) is
  // left once the run ends: the run root holds the report alone.
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename() != "r.json") left.push_back(e.path().string());
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
  bool any_fail = false;
  for (const auto& [name, verdict] : m.expected) any_fail |= verdict == "FAIL";
  EXPECT_EQ(r.exit_code, any_fail ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(Mutants, MutantTest, ::testing::ValuesIn(Mutants()),
                         [](const auto& mutant_info) {
                           std::string name = mutant_info.param.defect;
                           for (auto& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
