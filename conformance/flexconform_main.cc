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

// Everything the command line asks for: what each mode below reads.
struct Request {
  std::string driver, profile_path, bundled = "extended", timeout;
  std::string junit, json, html, shard, replay, color = "auto", baseline;
  std::string run_root = "/tmp";
  bool run_root_given = false;
  Selection selection;
  int repeat = 3;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int retries = 0;
  bool list = false, keep = false, coverage = false, allow_flaky = false;
  bool quiet = false, fail_fast = false, live_node = false;
  CatalogOptions catalog_options;
  std::optional<std::uint64_t> seed;
  bool depth_given = false, random_given = false;
  bool merge = false;
  std::vector<std::string> merge_inputs;
  std::string merge_junit, merge_json, merge_html;
};

void AddDriverOptions(CLI::App& app, Request& r) {
  app.add_option("--driver", r.driver,
                 "driver executable; profile derived from its init (fixture none)");
  app.add_option("--profile", r.profile_path, "driver profile (YAML)");
  app.add_option("--bundled", r.bundled,
                 "without --driver/--profile: the Convoy the bundled run uses")
      ->check(CLI::IsMember({"extended", "stock"}));
  app.add_option("--timeout", r.timeout, "harness deadline per driver call (e.g. 30s, 500ms)");
  app.add_flag("--live-node", r.live_node,
               "on a real cluster node (the Sonobuoy plugin): refuse a profile without liveNode, "
               "so only the cases safe there can run");
  app.add_option("--replay", r.replay,
                 "replay a flexsim-record-shim log (production traffic) against the driver and "
                 "report every outcome that differs from the recorded one (exit 1 if any)");
}

void AddSelectionOptions(CLI::App& app, Request& r) {
  app.add_option("--focus", r.selection.focus,
                 "run only cases whose 'name [tags]' matches this regex");
  app.add_option("--skip", r.selection.skip, "skip cases whose 'name [tags]' matches this regex");
  app.add_flag("--list", r.list,
               "list the selected cases and exit: a dry run, the profile is read and checked as a "
               "run would");
  app.add_flag("--coverage", r.coverage,
               "print which cases cover each failure mode F1-F30 and exit");
  app.add_option("--shard", r.shard,
                 "run shard i of n (i/n, 0-based); also GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS");
  app.add_option("--repeat", r.repeat, "repetitions for idempotency cases (default 3)")
      ->check(CLI::Range(1, 100));
  auto& sequence = r.catalog_options.sequence;
  app.add_option("--depth", sequence.depth,
                 "sequence/exhaustive: every call kubelet could make in every state reached in "
                 "fewer than this many steps, in walks of up to 12 (default 4)")
      ->check(CLI::Range(1, 8))
      ->each([&r](const std::string&) { r.depth_given = true; });
  app.add_option("--random", sequence.random_walks,
                 "sequence/random: how many random walks (default 10, or the --baseline "
                 "report's)")
      ->check(CLI::Range(0, 100000))
      ->each([&r](const std::string&) { r.random_given = true; });
  app.add_option("--seed", r.seed,
                 "sequence/random: seed of the first walk (default: the --baseline report's; "
                 "with --shard, 1; otherwise derived from the clock; always printed)");
}

void AddRunOptions(CLI::App& app, Request& r) {
  app.add_option("-j,--jobs", r.jobs,
                 "cases run at once, each in its own process (default: the number of CPUs); as "
                 "many more [waits] cases, which wait out a dead backend's timeouts, may run "
                 "beside them when N > 1")
      ->check(CLI::Range(1, 256));
  app.add_option("--retries", r.retries,
                 "run a FAILed case again up to N times; one that then passes is FLAKY (a gate "
                 "failure unless --allow-flaky)")
      ->check(CLI::Range(0, 10));
  app.add_flag("--allow-flaky", r.allow_flaky, "FLAKY cases do not fail the run");
  app.add_option("--baseline", r.baseline,
                 "an earlier --json report: exit 1 only for what is new (a case that FAILs now "
                 "and did not then, or breaks a new rule); fixed and still-failing cases are "
                 "listed")
      ->check(CLI::ExistingFile);
  app.add_flag("--keep", r.keep,
               "keep the run directory for inspection (later runs never sweep it: remove it "
               "yourself)");
  app.add_flag("--quiet", r.quiet, "print one line per case that is not PASS, and the summary");
  app.add_flag("--fail-fast", r.fail_fast,
               "start no case after one FAILs (the running ones finish); the summary says how "
               "many did not run");
  app.add_option("--run-root", r.run_root,
                 "where run directories go (default /tmp, or the profile's liveNode.scratch)")
      ->each([&r](const std::string&) { r.run_root_given = true; });
}

void AddReportOptions(CLI::App& app, Request& r) {
  app.add_option("--junit", r.junit, "write a JUnit XML report");
  app.add_option("--json", r.json, "write a JSON report (verdicts, durations, transcripts)");
  app.add_option("--html", r.html,
                 "write a self-contained HTML report (summary, a sequence diagram per case)");
  app.add_option("--color", r.color,
                 "colour the console: auto (a terminal, and NO_COLOR unset or empty), always, "
                 "never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

CLI::App* AddMergeCommand(CLI::App& app, Request& r) {
  CLI::App* merge = app.add_subcommand(
      "merge",
      "merge the --json reports of one run's shards (--shard i/n on several CI workers) into "
      "one report; exits as the merged run would (0, 1, 2)");
  merge->add_option("reports", r.merge_inputs, "the shards' JSON reports")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("--junit", r.merge_junit, "write the merged JUnit XML report");
  merge->add_option("--json", r.merge_json, "write the merged JSON report");
  merge->add_option("--html", r.merge_html, "write the merged HTML report");
  return merge;
}

// The parsed command line, or the exit code when parsing ends the program
// (--help, --version: 0; a usage error: 2, CLI11 having said why).
std::optional<int> ParseRequest(int argc, char** argv, Request& r) {
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
  AddDriverOptions(app, r);
  AddSelectionOptions(app, r);
  AddRunOptions(app, r);
  AddReportOptions(app, r);
  CLI::App* merge = AddMergeCommand(app, r);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  r.merge = merge->parsed();
  return std::nullopt;
}

int RunMerge(const Request& r) {
  try {
    const auto merged = MergeReports(r.merge_inputs);
    ConsoleReporter(std::cout, false).Summary(merged.summary);
    if (!r.merge_junit.empty()) WriteReport(r.merge_junit, JunitXml(merged.summary, merged.info));
    if (!r.merge_json.empty()) WriteReport(r.merge_json, JsonReport(merged.summary, merged.info));
    if (!r.merge_html.empty())
      WriteReport(r.merge_html,
                  HtmlReport(merged.summary, merged.info.driver, merged.info.fixture));
    return merged.summary.interrupted ? 2 : merged.summary.ExitCode();
  } catch (const std::exception& e) {
    std::cerr << "flexconform merge: " << e.what() << "\n";
    return 2;
  }
}

// How this run was started, selection left out: what a replay line repeats.
std::string RepeatCommand(const Request& r) {
  std::string command = "flexconform";
  auto repeat_option = [&command](const std::string& flag, const std::string& value) {
    command += " " + flag + " " + ShellQuote(value);
  };
  if (!r.driver.empty()) repeat_option("--driver", r.driver);
  if (!r.profile_path.empty()) repeat_option("--profile", r.profile_path);
  if (r.driver.empty() && r.profile_path.empty() && r.bundled != "extended")
    repeat_option("--bundled", r.bundled);
  if (!r.timeout.empty()) repeat_option("--timeout", r.timeout);
  if (r.repeat != 3) repeat_option("--repeat", std::to_string(r.repeat));
  return command;
}

// A gate compares like with like: against a baseline the random walks are
// the baseline's, and a sharded run's shards (on several workers) share one
// seed. Only a plain run explores a fresh seed each time. Returns where the
// seed came from when --seed did not give it: it is printed, so any run can
// be replayed.
std::string ChooseSeed(Request& r, const std::optional<LoadedReport>& baseline) {
  auto& sequence = r.catalog_options.sequence;
  if (r.seed) {
    sequence.seed = *r.seed;
    return "";
  }
  if (baseline) {
    sequence.seed = baseline->info.seed;
    if (!r.random_given) sequence.random_walks = baseline->info.random_walks;
    if (!r.depth_given) sequence.depth = baseline->info.depth;
    return "the baseline's";
  }
  if (r.selection.shard_total > 1) {
    sequence.seed = kShardedRunSeed;
    return "fixed when sharding";
  }
  sequence.seed = static_cast<std::uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);
  return "from the clock";
}

// A selection that matches no case is a usage error; an empty shard is not.
void RefuseAnEmptySelection(const std::vector<Case>& catalog, const Selection& selection,
                            const std::vector<const Case*>& selected) {
  if (!selected.empty() || (selection.focus.empty() && selection.skip.empty())) return;
  Selection unsharded = selection;
  unsharded.shard_index = 0;
  unsharded.shard_total = 1;
  if (!Select(catalog, unsharded).empty()) return;
  throw std::runtime_error(
      "no case matches" + (selection.focus.empty() ? "" : " --focus '" + selection.focus + "'") +
      (selection.skip.empty() ? "" : " with --skip '" + selection.skip + "'") + " (" +
      std::to_string(catalog.size()) + " cases; --list shows their names and tags)");
}

// The profile the run grades against, read and checked (--list too: a dry
// run); on a live node only the cases safe there stay selected.
DriverProfile ResolveRunProfile(Request& r, const std::vector<const Case*>& selected) {
  if (r.live_node && r.profile_path.empty())
    throw std::runtime_error(
        "--live-node needs --profile with a liveNode key (the scratch path on the node)");
  ProfileChoice choice;
  choice.profile_path = r.profile_path;
  choice.driver = r.driver;
  choice.bundled = r.bundled;
  choice.timeout = r.timeout;
  choice.flexconform_dir = SelfDir();
  DriverProfile profile = ResolveProfile(choice);
  if (r.live_node && profile.live_node_scratch.empty())
    throw std::runtime_error("--live-node: the profile " + r.profile_path +
                             " has no liveNode key, so it would run cases that are not safe on a "
                             "live node; add liveNode: {scratch: PATH}");
  if (!profile.live_node_scratch.empty()) {
    if (!r.run_root_given) r.run_root = profile.live_node_scratch;
    SkipCasesUnsafeOnALiveNode(profile, selected);
  }
  return profile;
}

// Without capabilities from a profile they come from init: a broken init is
// the driver's verdict (kubelet would not register it), not a usage error.
// Returns that refusal, "" when kubelet would register the driver.
std::string CapabilitiesFromInit(DriverProfile& profile) {
  if (profile.capabilities) return "";
  std::string refusal = InitRefusal(profile.driver, profile.driver_name);
  if (refusal.empty()) profile.capabilities = DeriveProfile(profile.driver).capabilities;
  return refusal;
}

int RunReplay(const Request& r, const DriverProfile& profile) {
  const auto calls = flexkit::sim::ReadRecording(r.replay);
  const auto result = Replay(profile, calls, r.run_root);
  for (const auto& d : result.differences)
    std::cout << r.replay << ":" << d.line << ": " << d.verb << ": " << d.what << "\n";
  for (const auto& note : result.notes) std::cout << "flexconform: replay: " << note << "\n";
  std::cout << result.calls << " recorded calls replayed against " << profile.driver << ", "
            << result.differences.size() << " differences\n";
  return result.differences.empty() ? 0 : 1;
}

// The run directory's parent, made when a live node's scratch names it;
// run dirs of killed runs under it are swept.
void PrepareRunRoot(const std::string& run_root, bool live_node) {
  if (live_node) {
    std::error_code ec;
    std::filesystem::create_directories(run_root, ec);
    if (ec)
      throw std::runtime_error("liveNode: create the scratch dir " + run_root + ": " +
                               ec.message());
  }
  for (const auto& dir : SweepKilledRuns(run_root))
    std::cerr << "flexconform: swept a killed run's " << dir << "\n";
}

bool ColourWanted(const std::string& color) {
  const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty
  return color == "always" || (color == "auto" && ::isatty(STDOUT_FILENO) != 0 &&
                               (no_color == nullptr || *no_color == '\0'));
}

void PrintRunHeader(const Request& r, const DriverProfile& profile,
                    const std::vector<const Case*>& selected, const std::string& seed_source) {
  if (r.quiet) return;
  std::cout << "flexconform: " << profile.driver << " (" << profile.driver_name << "), "
            << selected.size() << " cases, fixture " << profile.fixture.kind << "\n";
  if (!profile.live_node_scratch.empty()) {
    std::size_t safe = 0;
    for (const auto* c : selected) safe += LiveNodeCases().count(c->name);
    std::cout << "flexconform: live node: the " << safe
              << " cases tagged [live-node] run, the others SKIP; case dirs under " << r.run_root
              << "\n";
  }
  const auto& sequence = r.catalog_options.sequence;
  for (const auto* c : selected) {
    if (c->name != "sequence/random") continue;
    std::cout << "flexconform: sequence seed " << sequence.seed << " ("
              << (seed_source.empty() ? "" : seed_source + "; ") << "--seed " << sequence.seed
              << " replays it)\n";
  }
}

RunInfo DescribeThisRun(const Request& r, const DriverProfile& profile) {
  RunInfo info = DescribeRun(profile.driver, profile.driver_name);
  info.profile_file = r.profile_path;
  info.kubernetes = profile.kubernetes;
  info.fixture = profile.fixture.kind;
  info.seed = r.catalog_options.sequence.seed;
  info.random_walks = r.catalog_options.sequence.random_walks;
  info.depth = r.catalog_options.sequence.depth;
  info.shard_index = r.selection.shard_index;
  info.shard_total = r.selection.shard_total;
  info.focus = r.selection.focus;
  info.skip = r.selection.skip;
  info.flaky_allowed = r.allow_flaky;
  return info;
}

// What --seed/--depth/--random a replay line adds to the command.
std::string ReplayBase(const Request& r) {
  const auto& sequence = r.catalog_options.sequence;
  std::string base = RepeatCommand(r) + " --seed " + std::to_string(sequence.seed);
  if (sequence.depth != SequenceOptions{}.depth)
    base += " --depth " + std::to_string(sequence.depth);
  if (sequence.random_walks != SequenceOptions{}.random_walks)
    base += " --random " + std::to_string(sequence.random_walks);
  return base;
}

void CompareAndPrint(const Request& r, const LoadedReport& baseline, const RunSummary& summary,
                     RunInfo& info) {
  info.baseline = CompareWithBaseline(baseline.summary.results, summary.results, r.allow_flaky);
  info.baseline->file = r.baseline;
  const auto& diff = *info.baseline;
  std::cout << "\nagainst the baseline " << r.baseline << ": " << diff.new_failures.size()
            << " new, " << diff.fixed.size() << " fixed, " << diff.still_failing.size()
            << " still failing\n";
  for (const auto& line : diff.new_failures) std::cout << "  new:    " << line << "\n";
  for (const auto& name : diff.fixed) std::cout << "  fixed:  " << name << "\n";
  for (const auto& line : diff.still_failing) std::cout << "  still:  " << line << "\n";
}

// Against a baseline only what is new fails the gate.
int RunExitCode(const RunSummary& summary, const RunInfo& info, bool allow_flaky) {
  if (summary.interrupted) return 2;
  if (!info.baseline) return summary.ExitCode(allow_flaky);
  if (!info.baseline->new_failures.empty()) return 1;
  return summary.ExitCode(true) == 2 ? 2 : 0;
}

int RunSuite(const Request& r, const DriverProfile& profile,
             const std::vector<const Case*>& selected, const std::string& refusal,
             const std::optional<LoadedReport>& baseline, const std::string& seed_source) {
  PrepareRunRoot(r.run_root, !profile.live_node_scratch.empty());
  ConsoleReporter console(std::cout, ColourWanted(r.color), r.quiet);
  RunSettings settings;
  settings.repeat = r.repeat;
  settings.jobs = r.jobs;
  if (profile.max_jobs > 0 && r.jobs > profile.max_jobs) {
    settings.jobs = profile.max_jobs;
    std::cout << "note: the profile's maxJobs runs " << profile.max_jobs << " case"
              << (profile.max_jobs == 1 ? "" : "s") << " at a time (-j " << r.jobs
              << " asked): its backend cannot be shared by cases at once\n";
  }
  settings.retries = r.retries;
  settings.keep = r.keep;
  settings.fail_fast = r.fail_fast;
  settings.flaky_allowed = r.allow_flaky;
  settings.run_root = r.run_root;
  settings.flexconform_dir = SelfDir();
  settings.interrupted = &g_interrupted;
  settings.on_start = [&](const Case& c, std::size_t i, std::size_t n) {
    console.CaseStarted(c, i, n);
  };
  settings.on_result = [&](const CaseResult& result, std::size_t i, std::size_t n) {
    console.CaseFinished(result, i, n);
  };
  PrintRunHeader(r, profile, selected, seed_source);
  RunInfo info = DescribeThisRun(r, profile);
  auto summary =
      refusal.empty() ? RunCases(profile, selected, settings) : RefusedRun(selected, refusal);
  if (!refusal.empty()) {
    for (std::size_t i = 0; i < summary.results.size(); ++i)
      console.CaseFinished(summary.results[i], i, summary.results.size());
  }
  console.Summary(summary, ReplayBase(r));
  if (r.keep) std::cout << "run directory kept: " << summary.run_dir << "\n";
  if (baseline) CompareAndPrint(r, *baseline, summary, info);
  if (!r.junit.empty()) WriteReport(r.junit, JunitXml(summary, info));
  if (!r.json.empty()) WriteReport(r.json, JsonReport(summary, info));
  if (!r.html.empty())
    WriteReport(r.html, HtmlReport(summary, profile.driver, profile.fixture.kind));
  return RunExitCode(summary, info, r.allow_flaky);
}

std::optional<LoadedReport> ReadBaseline(const std::string& path) {
  if (path.empty()) return std::nullopt;
  try {
    return ReadJsonReport(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--baseline ") + e.what());
  }
}

// Every mode but merge: --coverage, --list, --replay, or a run.
int Run(Request& r) {
  r.catalog_options.sequence.command = RepeatCommand(r);
  ShardFromEnvironment(r.selection);
  if (!r.shard.empty()) ParseShard(r.shard, r.selection);
  const auto baseline = ReadBaseline(r.baseline);
  const std::string seed_source = ChooseSeed(r, baseline);
  const auto catalog = Catalog(r.catalog_options);
  if (r.coverage) {
    for (const auto& row : CoverageTable())
      std::cout << row.failure_mode << "  " << row.title << ": " << row.note << "\n";
    return 0;
  }
  const auto selected = Select(catalog, r.selection);
  RefuseAnEmptySelection(catalog, r.selection, selected);
  DriverProfile profile = ResolveRunProfile(r, selected);
  if (r.list) {
    for (const auto* c : selected) std::cout << CaseLabel(*c) << "\n";
    return 0;
  }
  const std::string refusal = CapabilitiesFromInit(profile);
  if (refusal.empty() && profile.needs_root && ::geteuid() != 0)
    throw std::runtime_error(
        std::string("the profile needs root (private mount namespaces, mounts") +
        (profile.fixture.kind == "convoy-fake" ? ", loop devices" : "") +
        "); run as root, or set 'privileges: none' to run only what needs no privileges");
  if (!r.replay.empty()) return RunReplay(r, profile);
  return RunSuite(r, profile, selected, refusal, baseline, seed_source);
}

}  // namespace

int main(int argc, char** argv) {
  WatchStopSignals();
  Request request;
  if (auto exit_code = ParseRequest(argc, argv, request)) return *exit_code;
  if (request.merge) return RunMerge(request);
  try {
    return Run(request);
  } catch (const std::exception& e) {
    std::cerr << "flexconform: " << e.what() << "\n";
    return 2;
  }
}
