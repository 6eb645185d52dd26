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
  // attach-*: the attachable driver (mutant-attach-driver.sh), whose tmpfs
  // "device" only suits the [sequence] cases.
  const bool attachable = m.defect.rfind("attach-", 0) == 0;
  auto r = flexkit::testing::RunProcess(
      {flexkit::testing::BuiltBinary("conformance/flexconform"), "--profile",
       mutants + (attachable ? "/profile-attach.yaml" : "/profile.yaml"), "--driver",
       mutants + "/mutant~" + m.defect + "/" + m.defect, "--json", dir.Join("r.json"),
       "--run-root", dir.path(), "--focus", attachable ? "^sequence/" : ".",
       // [sequence]: a fixed seed keeps the random walks, and so the
       // expectations, the same on every run; three walks are enough to
       // catch every sequence mutant and keep the shell drivers quick.
       "--seed", "1", "--random", "3"},
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

INSTANTIATE_TEST_SUITE_P(Mutants, MutantTest, ::testing::ValuesIn(Mutants()), [](const auto& mutant_info) {
  std::string name = mutant_info.param.defect;
  for (auto& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
});

}  // namespace
