// Proof that the suite catches what it claims: each driver in mutants/ is
// the correct shell driver with exactly one defect, and flexconform must
// grade it FAIL (or WARN) on exactly the expected cases, and PASS or SKIP
// every other one. `none` is the control: the same driver without a defect.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

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
  auto r = flexkit::testing::RunProcess(
      {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
       mutants + "/profile.yaml", "--driver", mutants + "/mutant~" + m.defect + "/" + m.defect,
       "--json", dir.Join("r.json"), "--run-root", dir.path()},
      options);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
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
  bool any_fail = false;
  for (const auto& [name, verdict] : m.expected) any_fail |= verdict == "FAIL";
  EXPECT_EQ(r.exit_code, any_fail ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(Mutants, MutantTest, ::testing::ValuesIn(Mutants()), [](const auto& mutant_info) {
  std::string name = mutant_info.param.defect;
  for (auto& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
});

}  // namespace
