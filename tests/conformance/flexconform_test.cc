// flexconform as a program: exit codes, --list, and the known-good drivers
// passing every case that applies to them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/report_schema.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::RunProcess;

std::string Flexconform() { return BuiltBinary("conformance/flexconform"); }

nlohmann::json ReadJson(const std::string& path) {
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(path), "") << path;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(Flexconform, ListPrintsTaggedCasesAndHonoursFocus) {
  auto r = RunProcess({Flexconform(), "--list", "--focus", "\\[secrets\\]"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("secrets/invalid-base64-is-failure [secrets][root]"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("lifecycle/"), std::string::npos) << r.out;
}

TEST(Flexconform, UsageErrorsExitTwo) {
  EXPECT_EQ(RunProcess({Flexconform(), "--shard", "5/2", "--list"}).exit_code, 2);
  EXPECT_EQ(RunProcess({Flexconform(), "--no-such-flag"}).exit_code, 2);
  flexkit::testing::TempDir dir;
  std::ofstream(dir.Join("p.yaml")) << "driver: /bin/true\nnodez: 2\n";
  auto r = RunProcess({Flexconform(), "--profile", dir.Join("p.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("p.yaml:2: unknown key 'nodez'"), std::string::npos) << r.err;
  // --list is a dry run: the same profile is refused there too.
  auto listed = RunProcess({Flexconform(), "--list", "--profile", dir.Join("p.yaml")});
  EXPECT_EQ(listed.exit_code, 2);
  EXPECT_NE(listed.err.find("p.yaml:2: unknown key 'nodez'"), std::string::npos) << listed.err;
  EXPECT_EQ(listed.out, "") << "nothing is listed for a profile a run would refuse";
  // A kubelet the cases cannot emulate is refused when the profile is read.
  std::ofstream(dir.Join("old.yaml")) << "driver: /bin/true\nkubernetes: \"1.6\"\n";
  auto old = RunProcess({Flexconform(), "--list", "--profile", dir.Join("old.yaml")});
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_NE(old.err.find("old.yaml:2: kubernetes: '1.6' is not a kubelet the suite runs"),
            std::string::npos)
      << old.err;
}

// A driver kubelet would not register gets a verdict, not a usage error:
// protocol/init-reply FAILs naming kubelet's reason, the rest SKIP, exit 1.
TEST(Flexconform, BrokenInitFailsWithKubeletsReason) {
  const std::string driver = std::string(FLEXKIT_CONTROLS_DIR) + "/flexkit~broken-init/broken-init";
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"null", "nil pointer"},
      {"string", "cannot unmarshal string"},
      {"undecodable", "invalid character 'i'"}};
  for (const auto& [variant, reason] : variants) {
    SCOPED_TRACE(variant);
    flexkit::testing::TempDir dir;
    flexkit::testing::RunOptions options;
    options.extra_env = {{"FLEXKIT_BROKEN_INIT", variant}};
    auto r = RunProcess(
        {Flexconform(), "--driver", driver, "--json", dir.Join("r.json"), "--run-root", dir.path()},
        options);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    auto doc = ReadJson(dir.Join("r.json"));
    ASSERT_FALSE(doc["cases"].empty());
    const auto& init = doc["cases"][0];
    EXPECT_EQ(init["name"], "protocol/init-reply");
    EXPECT_EQ(init["verdict"], "FAIL");
    const std::string why = init["reason"];
    EXPECT_NE(why.find(reason), std::string::npos) << why;
    EXPECT_NE(why.find("register"), std::string::npos) << why;  // kubelet's consequence
    for (std::size_t i = 1; i < doc["cases"].size(); ++i) {
      EXPECT_EQ(doc["cases"][i]["verdict"], "SKIP") << doc["cases"][i]["name"];
      EXPECT_NE(doc["cases"][i]["reason"].get<std::string>().find("refuses to register"),
                std::string::npos);
    }
    EXPECT_NE(r.out.find("FAIL protocol/init-reply"), std::string::npos) << r.out;
  }
}

TEST(Flexconform, CoverageExplainsEveryFailureMode) {
  auto r = RunProcess({Flexconform(), "--coverage"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("F14"), std::string::npos);
  EXPECT_EQ(r.out.find("NOT COVERED"), std::string::npos) << r.out;
}

TEST(Flexconform, TmpfsPassesEveryApplicableCase) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(120);
  auto r = RunProcess(
      {Flexconform(), "--driver", BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), "--json",
       dir.Join("r.json"), "--junit", dir.Join("r.xml"), "--run-root", dir.path()},
      options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = ReadJson(dir.Join("r.json"));
  int passed = 0;
  for (const auto& c : doc["cases"]) {
    const std::string verdict = c["verdict"];
    if (verdict == "SKIP") {
      // A driver without a profile SKIPs what only a profile can say
      // (invalidOptions, freeTextOptions, fsTypes, storage, a backend fixture).
      const std::string reason = c["reason"];
      EXPECT_TRUE(reason.rfind("capability:", 0) == 0 || reason.rfind("profile:", 0) == 0)
          << c["name"] << ": " << reason;
    } else {
      EXPECT_EQ(verdict, "PASS") << c["name"] << ": " << c["reason"];
      ++passed;
    }
  }
  EXPECT_GE(passed, 15);
}

// A command fixture whose backend one case holds from setup to teardown
// (a lock dir standing for one device node or one mock): maxJobs: 1 runs
// its cases one at a time whatever -j says, so no setup finds it taken.
TEST(Flexconform, MaxJobsKeepsCasesOfAnUnshareableBackendApart) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  const std::string lock = dir.Join("backend.lock");
  std::ofstream(dir.Join("p.yaml"))
      << "driver: " << BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs") << "\n"
      << "maxJobs: 1\n"
      << "fixture:\n"
      << "  kind: command\n"
      << "  setup: mkdir " << lock << "\n"
      << "  teardown: rmdir " << lock << "\n";
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(120);
  auto r = RunProcess({Flexconform(), "--profile", dir.Join("p.yaml"), "-j", "4", "--focus",
                       "^(lifecycle|idempotency|teardown)/", "--json", dir.Join("r.json"),
                       "--run-root", dir.path()},
                      options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("maxJobs runs 1 case at a time (-j 4 asked)"), std::string::npos) << r.out;
  const auto doc = ReadJson(dir.Join("r.json"));
  int ran = 0;
  for (const auto& c : doc["cases"]) ran += c["verdict"] == "PASS";
  EXPECT_GE(ran, 4) << r.out;
}

TEST(Flexconform, SequenceFlagsAreCheckedAndTheCasesListed) {
  auto r = RunProcess({Flexconform(), "--list", "--focus", "\\[sequence\\]"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sequence/exhaustive [sequence][root]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sequence/random [sequence][root]"), std::string::npos) << r.out;
  EXPECT_EQ(RunProcess({Flexconform(), "--depth", "0", "--list"}).exit_code, 2);
  EXPECT_EQ(RunProcess({Flexconform(), "--seed", "abc", "--list"}).exit_code, 2);
  EXPECT_EQ(RunProcess({Flexconform(), "--random", "-1", "--list"}).exit_code, 2);
}

// The [sequence] cases on a known-good driver: both PASS, the seed is
// printed for replay, and the exhaustive case ran the enumeration's count.
nlohmann::json SequenceEvent(const nlohmann::json& doc, const std::string& name) {
  for (const auto& c : doc["cases"]) {
    if (c["name"] != name) continue;
    for (const auto& e : c["transcript"]) {
      if (e.value("event", "") == name) return e["details"];
    }
  }
  return nullptr;
}

void ExpectSequencesPass(const std::vector<std::string>& driver_args, int exhaustive_transitions) {
  flexkit::testing::TempDir dir;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(240);
  std::vector<std::string> argv = {Flexconform()};
  argv.insert(argv.end(), driver_args.begin(), driver_args.end());
  const std::vector<std::string> flags = {"--focus",    "^sequence/", "--seed", "5",
                                          "--random",   "4",          "--json", dir.Join("r.json"),
                                          "--run-root", dir.path()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = RunProcess(argv, options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("sequence seed 5 (--seed 5 replays it)"), std::string::npos) << r.out;
  auto doc = ReadJson(dir.Join("r.json"));
  ASSERT_EQ(doc["cases"].size(), 2u);
  for (const auto& c : doc["cases"]) EXPECT_EQ(c["verdict"], "PASS") << c["name"] << c["reason"];
  auto exhaustive = SequenceEvent(doc, "sequence/exhaustive");
  ASSERT_TRUE(exhaustive.is_object()) << doc.dump();
  EXPECT_EQ(exhaustive["depth"], 4);
  EXPECT_EQ(exhaustive["transitions"], exhaustive_transitions);
  EXPECT_LT(exhaustive["walks"], exhaustive_transitions / 4);  // a tour, not a sequence per call
  auto random = SequenceEvent(doc, "sequence/random");
  ASSERT_TRUE(random.is_object()) << doc.dump();
  EXPECT_EQ(random["walks"], 4);
  EXPECT_EQ(random["seed"], 5);
}

TEST(Flexconform, TmpfsPassesEverySequence) {
  FLEXKIT_REQUIRE_ROOT();
  // mount-only, two nodes (--driver alone), two pods each: 16 states at
  // depth 4, 15 of them closer than 4 steps, 8 calls in each.
  ExpectSequencesPass({"--driver", BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs")}, 120);
}

TEST(Flexconform, BundledConvoyPassesEverySequenceOnTheFake) {
  FLEXKIT_REQUIRE_ROOT();
  // Attachable, two pods on each node: 118 calls to cover at depth 4.
  ExpectSequencesPass({}, 118);  // the bundled profile has two nodes
}

// The fake cloud's own record is part of the real state: a detach that
// answers Success and leaves the EBS attachment is caught, though kubelet
// and isattached could not tell.
TEST(Flexconform, SequencesCatchADetachThatLeavesTheBackendAttachment) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  const std::string lazy = dir.Join("convoy");
  std::ofstream(lazy)
      << "#!/bin/sh\n"
      << "if [ \"$1\" = detach ]; then echo '{\"status\":\"Success\"}'; exit 0; fi\n"
      << "exec " << BuiltBinary("driver/convoy-flexvolume") << " \"$@\"\n";
  std::filesystem::permissions(lazy, std::filesystem::perms::owner_all);
  flexkit::testing::RunOptions options;
  options.extra_env["FLEXCONFORM_CONVOY_DRIVER"] = lazy;
  options.deadline = std::chrono::seconds(120);
  auto r = RunProcess(
      {Flexconform(), "--focus", "sequence/exhaustive", "--depth", "2", "--run-root", dir.path()},
      options);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("F12 detach-releases: detach releases the attachment"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("attached to node-1"), std::string::npos) << r.out;
}

// Shards of one run, each on its own CI worker, become one report; a case
// in two shards, or shards of two drivers, is refused.
TEST(Flexconform, MergeJoinsTheShardsOfARunIntoOneReport) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  const std::string tmpfs = BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs");
  // A hang guard, not a time limit: under TSan on a busy 2-core machine a
  // shard took over a minute.
  flexkit::testing::RunOptions slow;
  slow.deadline = std::chrono::minutes(5);
  for (const std::string shard : {"0", "1"}) {
    auto r = RunProcess({Flexconform(), "--driver", tmpfs, "--shard", shard + "/2", "--json",
                         dir.Join(shard + ".json"), "--run-root", dir.path()},
                        slow);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  auto merged = RunProcess({Flexconform(), "merge", dir.Join("0.json"), dir.Join("1.json"),
                            "--json", dir.Join("all.json"), "--junit", dir.Join("all.xml"),
                            "--html", dir.Join("all.html")});
  EXPECT_EQ(merged.exit_code, 0) << merged.out << merged.err;
  const auto all = ReadJson(dir.Join("all.json"));
  const auto listed = RunProcess({Flexconform(), "--list"});
  std::size_t catalog = 0;
  for (char ch : listed.out) catalog += ch == '\n';
  EXPECT_EQ(all["cases"].size(), catalog);
  EXPECT_EQ(all["summary"]["cases"], catalog);
  EXPECT_TRUE(std::filesystem::exists(dir.Join("all.html")));
  EXPECT_EQ(all["run"]["shard"], nlohmann::json::parse(R"({"index": 0, "total": 1})"));
  EXPECT_EQ(ReadJson(dir.Join("1.json"))["run"]["shard"],
            nlohmann::json::parse(R"({"index": 1, "total": 2})"));
  // A lost upload never passes the gate.
  auto lost =
      RunProcess({Flexconform(), "merge", dir.Join("0.json"), "--junit", dir.Join("x.xml")});
  EXPECT_EQ(lost.exit_code, 2) << lost.out;
  EXPECT_NE(lost.err.find("flexconform merge: merge: shard 1/2 missing: the 1 report(s) given hold "
                          "1 of the run's 2 shards"),
            std::string::npos)
      << lost.err;
  EXPECT_FALSE(std::filesystem::exists(dir.Join("x.xml")));
  auto twice = RunProcess({Flexconform(), "merge", dir.Join("0.json"), dir.Join("0.json")});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("shard 0/2 is given twice"), std::string::npos) << twice.err;
  // A shard of another run (another seed) is not this run's.
  auto other = ReadJson(dir.Join("1.json"));
  other["run"]["seed"] = other["run"]["seed"].get<std::uint64_t>() + 1;
  std::ofstream(dir.Join("other.json")) << other.dump();
  auto mixed = RunProcess({Flexconform(), "merge", dir.Join("0.json"), dir.Join("other.json")});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("other.json is of another run: --seed"), std::string::npos) << mixed.err;
}

// --keep's run dir is the user's: the next run does not sweep it as a
// killed run's.
TEST(Flexconform, KeepsAKeptRunDirAcrossTheNextRun) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  const std::vector<std::string> run = {
      Flexconform(), "--driver",   BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"),
      "--focus",     "init-reply", "--run-root",
      dir.path()};
  auto kept_run = run;
  kept_run.push_back("--keep");
  auto kept = RunProcess(kept_run);
  ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
  const std::string marker = "run directory kept: ";
  const auto at = kept.out.find(marker);
  ASSERT_NE(at, std::string::npos) << kept.out;
  const std::string kept_dir =
      kept.out.substr(at + marker.size(), kept.out.find('\n', at) - at - marker.size());
  ASSERT_TRUE(std::filesystem::exists(kept_dir)) << kept_dir;
  auto next = RunProcess(run);
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_TRUE(std::filesystem::exists(kept_dir)) << next.err;
  EXPECT_EQ(next.err.find("swept"), std::string::npos) << next.err;
}

TEST(Flexconform, SweepsTheRunDirOfAKilledRun) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  // pid_max is at most 2^22: this pid cannot be a live process.
  const std::string stale = dir.Join("flexconform-99999999");
  std::filesystem::create_directories(stale + "/3/nodes");
  std::ofstream(stale + "/.flexconform-run") << "99999999\n";
  const std::string unrelated = dir.Join("flexconform-notes");
  std::filesystem::create_directories(unrelated);
  auto r = RunProcess({Flexconform(), "--driver", BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"),
                       "--focus", "init-reply", "--run-root", dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(stale)) << r.err;
  EXPECT_TRUE(std::filesystem::exists(unrelated)) << "only marked run dirs are swept";
  EXPECT_NE(r.err.find("swept a killed run"), std::string::npos) << r.err;
}

// The most cases whose driver calls were under way at one moment (a case's
// span: its first call's start to its last call's end), of those `pick`s.
template <typename Pick>
int MostCasesAtOnce(const nlohmann::json& doc, Pick pick) {
  std::vector<std::pair<long long, int>> edges;  // (time, +1 start / -1 end)
  for (const auto& c : doc["cases"]) {
    const auto& calls = c["timeline"]["calls"];
    if (!pick(c) || calls.empty()) continue;
    long long first = calls[0][0], last = calls[0][1];
    for (const auto& call : calls) {
      first = std::min<long long>(first, call[0]);
      last = std::max<long long>(last, call[1]);
    }
    edges.push_back({first, +1});
    edges.push_back({last, -1});
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at the same ms
  int now = 0, most = 0;
  for (const auto& [time, step] : edges) most = std::max(most, now += step);
  return most;
}

bool Waits(const nlohmann::json& c) {
  for (const auto& t : c["tags"]) {
    if (t == "waits") return true;
  }
  return false;
}

TEST(Flexconform, BundledConvoyPassesEveryApplicableCaseOnTheFake) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(600);
  std::vector<std::string> argv = {Flexconform(),      "-j",         "2",       "--json",
                                   dir.Join("r.json"), "--run-root", dir.path()};
#if defined(__SANITIZE_THREAD__)
  // This case forks driver calls from several threads at once. Under this
  // toolchain's TSan runtime vfork becomes fork, and a child forked while
  // another thread holds one of the runtime's internal locks can wait on it
  // forever before exec (google/sanitizers #945 and #1400, fixed in LLVM
  // after this toolchain): flexconform can hang with no report. The case
  // runs here in the ASan and release stages, and with flexkit-tmpfs under
  // TSan.
  argv.insert(argv.end(), {"--skip", "robustness/concurrent-volumes"});
#endif
  auto r = RunProcess(argv, options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = ReadJson(dir.Join("r.json"));
  for (const auto& c : doc["cases"]) {
    EXPECT_TRUE(c["verdict"] == "PASS" || c["verdict"] == "SKIP")
        << c["name"] << ": " << c["reason"];
  }
  // -j 2: two cases at once, and up to two [waits] cases beside them.
  EXPECT_LE(MostCasesAtOnce(doc, [](const nlohmann::json& c) { return !Waits(c); }), 2);
  EXPECT_LE(MostCasesAtOnce(doc, [](const nlohmann::json&) { return true; }), 4);
  EXPECT_GE(MostCasesAtOnce(doc, [](const nlohmann::json&) { return true; }), 3);
}

TEST(Flexconform, BundledStockConvoyPassesEveryApplicableCaseAndSkipsTakeOver) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(600);
  // sequence/exhaustive (about a minute) runs in the extended bundled case;
  // here sequence/random walks the stock daemon's mounts, to keep CI short.
  std::string skip = "sequence/exhaustive";
#if defined(__SANITIZE_THREAD__)
  skip += "|robustness/concurrent-volumes";  // see the extended case above
#endif
  std::vector<std::string> argv = {Flexconform(), "--bundled",        "stock",
                                   "--json",      dir.Join("r.json"), "--run-root",
                                   dir.path(),    "--skip",           skip};
  auto r = RunProcess(argv, options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = ReadJson(dir.Join("r.json"));
  int passed = 0, take_over_skips = 0;
  for (const auto& c : doc["cases"]) {
    EXPECT_TRUE(c["verdict"] == "PASS" || c["verdict"] == "SKIP")
        << c["name"] << ": " << c["reason"];
    passed += c["verdict"] == "PASS";
    if (c["verdict"] == "SKIP" &&
        c["reason"].get<std::string>().find("cannot take an EBS volume over") != std::string::npos)
      ++take_over_skips;
  }
  EXPECT_GT(passed, 25);
  EXPECT_EQ(take_over_skips, 3) << "the crash-reschedule cases name what stock cannot do";
}

}  // namespace
