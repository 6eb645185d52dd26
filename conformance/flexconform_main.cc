// flexconform: the FlexVolume conformance suite (README.md beside this
// file). Exit codes: 0 every case passed (WARN and SKIP allowed), 1 a case
// failed (a driver whose init kubelet refuses included), 2 usage or
// environment error, an interrupted run, or a harness ERROR with no FAIL.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "conformance/baseline.h"
#include "conformance/catalog.h"
#include "conformance/default_profiles.h"
#include "conformance/html_report.h"
#include "conformance/replay.h"
#include "conformance/reports.h"
#include "conformance/runner.h"
#include "conformance/selection.h"

using namespace flexkit::conform;

namespace {

std::string SelfDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

// SIGINT/SIGTERM: the running cases finish (and clean up), no more start.
// Their workers block both signals; a killed run's run dir is swept by the
// next run.
std::atomic<bool> g_interrupted{false};

// sequence/random's seed in a sharded run given none: every shard's the same.
constexpr std::uint64_t kShardedRunSeed = 1;

void OnStopSignal(int) {
  static constexpr char kMessage[] =
      "\nflexconform: interrupted: finishing the running cases, then cleaning up\n";
  if (!g_interrupted.exchange(true)) {
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  }
}

void WatchStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

// `text` as one shell word.
std::string ShellQuote(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=:,+@%") == std::string::npos)
    return text;
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

int main(int argc, char** argv) {
  WatchStopSignals();
  CLI::App app{
      "flexconform: the FlexVolume conformance suite. With no arguments: the bundled "
      "convoy-flexvolume against the fake Convoy/EBS (needs root)."};
  app.set_version_flag("--version", std::string("flexconform ") + FLEXKIT_VERSION);
  app.footer(
      "Exit codes: 0 every case passed (WARN and SKIP allowed), 1 a case failed (a driver\n"
      "kubelet would not register included), 2 usage or environment error, an interrupted\n"
      "run, a selection that matches no case, or a harness ERROR with no FAIL.\n"
      "Each FAIL and WARN names a rule of conformance/RULES.md: its id is the text before\n"
      "the colon (\"F19 never-reformat: ...\"), a section of that file.");
  std::string driver, profile_path, junit, json, html, shard, run_root = "/tmp", timeout, replay;
  Selection selection;
  int repeat = 3;
  bool list = false, keep = false, coverage = false;
  app.add_option("--driver", driver,
                 "driver executable; profile derived from its init (fixture none)");
  app.add_option("--profile", profile_path, "driver profile (YAML)");
  std::string bundled = "extended";
  app.add_option("--bundled", bundled,
                 "without --driver/--profile: the Convoy the bundled run uses")
      ->check(CLI::IsMember({"extended", "stock"}));
  app.add_option("--focus", selection.focus,
                 "run only cases whose 'name [tags]' matches this regex");
  app.add_option("--skip", selection.skip, "skip cases whose 'name [tags]' matches this regex");
  app.add_flag("--list", list,
               "list the selected cases and exit: a dry run, the profile is read and checked as a "
               "run would");
  app.add_flag("--coverage", coverage, "print which cases cover each failure mode F1-F30 and exit");
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("-j,--jobs", jobs,
                 "cases run at once, each in its own process (default: the number of CPUs); as "
                 "many more [waits] cases, which wait out a dead backend's timeouts, may run "
                 "beside them when N > 1")
      ->check(CLI::Range(1, 256));
  int retries = 0;
  bool allow_flaky = false;
  std::string baseline;
  app.add_option("--retries", retries,
                 "run a FAILed case again up to N times; one that then passes is FLAKY (a gate "
                 "failure unless --allow-flaky)")
      ->check(CLI::Range(0, 10));
  app.add_flag("--allow-flaky", allow_flaky, "FLAKY cases do not fail the run");
  app.add_option("--baseline", baseline,
                 "an earlier --json report: exit 1 only for what is new (a case that FAILs now "
                 "and did not then, or breaks a new rule); fixed and still-failing cases are "
                 "listed")
      ->check(CLI::ExistingFile);
  app.add_option("--repeat", repeat, "repetitions for idempotency cases (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--shard", shard,
                 "run shard i of n (i/n, 0-based); also GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS");
  app.add_flag("--keep", keep,
               "keep the run directory for inspection (later runs never sweep it: remove it "
               "yourself)");
  bool quiet = false, fail_fast = false;
  app.add_flag("--quiet", quiet, "print one line per case that is not PASS, and the summary");
  app.add_flag("--fail-fast", fail_fast,
               "start no case after one FAILs (the running ones finish); the summary says how "
               "many did not run");
  app.add_option("--timeout", timeout, "harness deadline per driver call (e.g. 30s, 500ms)");
  app.add_option("--junit", junit, "write a JUnit XML report");
  app.add_option("--json", json, "write a JSON report (verdicts, durations, transcripts)");
  app.add_option("--html", html,
                 "write a self-contained HTML report (summary, a sequence diagram per case)");
  auto* run_root_option =
      app.add_option("--run-root", run_root,
                     "where run directories go (default /tmp, or the profile's liveNode.scratch)");
  bool live_node = false;
  app.add_flag("--live-node", live_node,
               "on a real cluster node (the Sonobuoy plugin): refuse a profile without liveNode, "
               "so only the cases safe there can run");
  std::string color = "auto";
  app.add_option("--color", color,
                 "colour the console: auto (a terminal, and NO_COLOR unset or empty), always, "
                 "never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--replay", replay,
                 "replay a flexsim-record-shim log (production traffic) against the driver and "
                 "report every outcome that differs from the recorded one (exit 1 if any)");
  CatalogOptions catalog_options;
  std::optional<std::uint64_t> seed;
  auto* depth_option =
      app.add_option(
             "--depth", catalog_options.sequence.depth,
             "sequence/exhaustive: every call kubelet could make in every state reached in fewer "
             "than this many steps, in walks of up to 12 (default 4)")
          ->check(CLI::Range(1, 8));
  auto* random_option = app.add_option("--random", catalog_options.sequence.random_walks,
                                       "sequence/random: how many random walks (default 10, or "
                                       "the --baseline report's)")
                            ->check(CLI::Range(0, 100000));
  app.add_option("--seed", seed,
                 "sequence/random: seed of the first walk (default: the --baseline report's; "
                 "with --shard, 1; otherwise derived from the clock; always printed)");
  CLI::App* merge = app.add_subcommand(
      "merge",
      "merge the --json reports of one run's shards (--shard i/n on several CI workers) into "
      "one report; exits as the merged run would (0, 1, 2)");
  std::vector<std::string> merge_inputs;
  std::string merge_junit, merge_json, merge_html;
  merge->add_option("reports", merge_inputs, "the shards' JSON reports")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("--junit", merge_junit, "write the merged JUnit XML report");
  merge->add_option("--json", merge_json, "write the merged JSON report");
  merge->add_option("--html", merge_html, "write the merged HTML report");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (merge->parsed()) {
    try {
      const auto merged = MergeReports(merge_inputs);
      ConsoleReporter(std::cout, false).Summary(merged.summary);
      if (!merge_junit.empty()) WriteReport(merge_junit, JunitXml(merged.summary, merged.info));
      if (!merge_json.empty()) WriteReport(merge_json, JsonReport(merged.summary, merged.info));
      if (!merge_html.empty())
        WriteReport(merge_html,
                    HtmlReport(merged.summary, merged.info.driver, merged.info.fixture));
      return merged.summary.interrupted ? 2 : merged.summary.ExitCode();
    } catch (const std::exception& e) {
      std::cerr << "flexconform merge: " << e.what() << "\n";
      return 2;
    }
  }

  // How this run was started, selection left out: what a replay line repeats.
  std::string command = "flexconform";
  auto repeat_option = [&command](const std::string& flag, const std::string& value) {
    command += " " + flag + " " + ShellQuote(value);
  };
  if (!driver.empty()) repeat_option("--driver", driver);
  if (!profile_path.empty()) repeat_option("--profile", profile_path);
  if (driver.empty() && profile_path.empty() && bundled != "extended")
    repeat_option("--bundled", bundled);
  if (!timeout.empty()) repeat_option("--timeout", timeout);
  if (repeat != 3) repeat_option("--repeat", std::to_string(repeat));
  catalog_options.sequence.command = command;
  try {
    ShardFromEnvironment(selection);
    if (!shard.empty()) ParseShard(shard, selection);
    std::optional<LoadedReport> baseline_report;
    try {
      if (!baseline.empty()) baseline_report = ReadJsonReport(baseline);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("--baseline ") + e.what());
    }
    // A gate compares like with like: against a baseline the random walks
    // are the baseline's, and a sharded run's shards (on several workers)
    // share one seed. Only a plain run explores a fresh seed each time.
    // The seed is printed whenever it is not given, so any run can be replayed.
    std::string seed_source;  // where the seed came from, when not from --seed
    if (seed) {
      catalog_options.sequence.seed = *seed;
    } else if (baseline_report) {
      catalog_options.sequence.seed = baseline_report->info.seed;
      if (random_option->count() == 0)
        catalog_options.sequence.random_walks = baseline_report->info.random_walks;
      if (depth_option->count() == 0) catalog_options.sequence.depth = baseline_report->info.depth;
      seed_source = "the baseline's";
    } else if (selection.shard_total > 1) {
      catalog_options.sequence.seed = kShardedRunSeed;
      seed_source = "fixed when sharding";
    } else {
      catalog_options.sequence.seed = static_cast<std::uint64_t>(
          std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);
      seed_source = "from the clock";
    }
    const auto catalog = Catalog(catalog_options);
    if (coverage) {
      for (const auto& row : CoverageTable())
        std::cout << row.failure_mode << "  " << row.title << ": " << row.note << "\n";
      return 0;
    }
    const auto selected = Select(catalog, selection);
    if (selected.empty() && (!selection.focus.empty() || !selection.skip.empty())) {
      // Before sharding: a shard may be empty, a selection may not.
      Selection unsharded = selection;
      unsharded.shard_index = 0;
      unsharded.shard_total = 1;
      if (Select(catalog, unsharded).empty()) {
        std::cerr << "flexconform: no case matches"
                  << (selection.focus.empty() ? "" : " --focus '" + selection.focus + "'")
                  << (selection.skip.empty() ? "" : " with --skip '" + selection.skip + "'") << " ("
                  << catalog.size() << " cases; --list shows their names and tags)\n";
        return 2;
      }
    }
    if (live_node && profile_path.empty()) {
      std::cerr << "flexconform: --live-node needs --profile with a liveNode key (the scratch "
                   "path on the node)\n";
      return 2;
    }
    // --list is a dry run: the profile is read and checked as a run would.
    ProfileChoice choice;
    choice.profile_path = profile_path;
    choice.driver = driver;
    choice.bundled = bundled;
    choice.timeout = timeout;
    choice.flexconform_dir = SelfDir();
    DriverProfile profile = ResolveProfile(choice);
    if (live_node && profile.live_node_scratch.empty()) {
      std::cerr << "flexconform: --live-node: the profile " << profile_path
                << " has no liveNode key, so it would run cases that are not safe on a live node; "
                   "add liveNode: {scratch: PATH}\n";
      return 2;
    }
    if (!profile.live_node_scratch.empty()) {
      if (run_root_option->count() == 0) run_root = profile.live_node_scratch;
      SkipCasesUnsafeOnALiveNode(profile, selected);
    }
    if (list) {
      for (const auto* c : selected) std::cout << CaseLabel(*c) << "\n";
      return 0;
    }
    // Without capabilities from a profile they come from init: a broken
    // init is the driver's verdict (kubelet would not register it), not a
    // usage error.
    std::string refusal;
    if (!profile.capabilities) {
      refusal = InitRefusal(profile.driver, profile.driver_name);
      if (refusal.empty()) profile.capabilities = DeriveProfile(profile.driver).capabilities;
    }
    if (refusal.empty() && profile.needs_root && ::geteuid() != 0) {
      std::cerr
          << "flexconform: the profile needs root (private mount namespaces, mounts"
          << (profile.fixture.kind == "convoy-fake" ? ", loop devices" : "")
          << "); run as root, or set 'privileges: none' to run only what needs no privileges\n";
      return 2;
    }
    if (!replay.empty()) {
      const auto calls = flexkit::sim::ReadRecording(replay);
      const auto result = Replay(profile, calls, run_root);
      for (const auto& d : result.differences)
        std::cout << replay << ":" << d.line << ": " << d.verb << ": " << d.what << "\n";
      for (const auto& note : result.notes) std::cout << "flexconform: replay: " << note << "\n";
      std::cout << result.calls << " recorded calls replayed against " << profile.driver << ", "
                << result.differences.size() << " differences\n";
      return result.differences.empty() ? 0 : 1;
    }
    if (!profile.live_node_scratch.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(run_root, ec);
      if (ec) {
        std::cerr << "flexconform: liveNode: create the scratch dir " << run_root << ": "
                  << ec.message() << "\n";
        return 2;
      }
    }
    for (const auto& dir : SweepKilledRuns(run_root))
      std::cerr << "flexconform: swept a killed run's " << dir << "\n";

    const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty
    const bool colour = color == "always" || (color == "auto" && ::isatty(STDOUT_FILENO) != 0 &&
                                              (no_color == nullptr || *no_color == '\0'));
    ConsoleReporter console(std::cout, colour, quiet);
    RunSettings settings;
    settings.repeat = repeat;
    settings.jobs = jobs;
    settings.retries = retries;
    settings.keep = keep;
    settings.fail_fast = fail_fast;
    settings.flaky_allowed = allow_flaky;
    settings.run_root = run_root;
    settings.flexconform_dir = SelfDir();
    settings.interrupted = &g_interrupted;
    settings.on_start = [&](const Case& c, std::size_t i, std::size_t n) {
      console.CaseStarted(c, i, n);
    };
    settings.on_result = [&](const CaseResult& r, std::size_t i, std::size_t n) {
      console.CaseFinished(r, i, n);
    };
    if (!quiet)
      std::cout << "flexconform: " << profile.driver << " (" << profile.driver_name << "), "
                << selected.size() << " cases, fixture " << profile.fixture.kind << "\n";
    if (!profile.live_node_scratch.empty() && !quiet) {
      std::size_t safe = 0;
      for (const auto* c : selected) safe += LiveNodeCases().count(c->name);
      std::cout << "flexconform: live node: the " << safe
                << " cases tagged [live-node] run, the others SKIP; case dirs under " << run_root
                << "\n";
    }
    for (const auto* c : selected) {
      if (c->name == "sequence/random" && !quiet) {
        std::cout << "flexconform: sequence seed " << catalog_options.sequence.seed << " ("
                  << (seed_source.empty() ? "" : seed_source + "; ") << "--seed "
                  << catalog_options.sequence.seed << " replays it)\n";
      }
    }
    RunInfo info = DescribeRun(profile.driver, profile.driver_name);
    info.profile_file = profile_path;
    info.kubernetes = profile.kubernetes;
    info.fixture = profile.fixture.kind;
    info.seed = catalog_options.sequence.seed;
    info.random_walks = catalog_options.sequence.random_walks;
    info.depth = catalog_options.sequence.depth;
    info.shard_index = selection.shard_index;
    info.shard_total = selection.shard_total;
    info.focus = selection.focus;
    info.skip = selection.skip;
    auto summary =
        refusal.empty() ? RunCases(profile, selected, settings) : RefusedRun(selected, refusal);
    if (!refusal.empty()) {
      for (std::size_t i = 0; i < summary.results.size(); ++i)
        console.CaseFinished(summary.results[i], i, summary.results.size());
    }
    std::string replay_base = command + " --seed " + std::to_string(catalog_options.sequence.seed);
    if (catalog_options.sequence.depth != SequenceOptions{}.depth)
      replay_base += " --depth " + std::to_string(catalog_options.sequence.depth);
    if (catalog_options.sequence.random_walks != SequenceOptions{}.random_walks)
      replay_base += " --random " + std::to_string(catalog_options.sequence.random_walks);
    console.Summary(summary, replay_base);
    if (keep) std::cout << "run directory kept: " << summary.run_dir << "\n";
    info.flaky_allowed = allow_flaky;
    if (baseline_report) {
      info.baseline =
          CompareWithBaseline(baseline_report->summary.results, summary.results, allow_flaky);
      info.baseline->file = baseline;
      const auto& diff = *info.baseline;
      std::cout << "\nagainst the baseline " << baseline << ": " << diff.new_failures.size()
                << " new, " << diff.fixed.size() << " fixed, " << diff.still_failing.size()
                << " still failing\n";
      for (const auto& line : diff.new_failures) std::cout << "  new:    " << line << "\n";
      for (const auto& name : diff.fixed) std::cout << "  fixed:  " << name << "\n";
      for (const auto& line : diff.still_failing) std::cout << "  still:  " << line << "\n";
    }
    if (!junit.empty()) WriteReport(junit, JunitXml(summary, info));
    if (!json.empty()) WriteReport(json, JsonReport(summary, info));
    if (!html.empty()) WriteReport(html, HtmlReport(summary, profile.driver, profile.fixture.kind));
    if (summary.interrupted) return 2;
    if (info.baseline) {
      if (!info.baseline->new_failures.empty()) return 1;
      const int code = summary.ExitCode(true);
      return code == 2 ? 2 : 0;
    }
    return summary.ExitCode(allow_flaky);
  } catch (const std::exception& e) {
    std::cerr << "flexconform: " << e.what() << "\n";
    return 2;
  }
}
