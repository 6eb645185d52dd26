#pragma once
// The three ways a run is reported: a live console (progress, elapsed,
// colour only on a terminal), JUnit XML (one testsuite, one testcase per
// case, <skipped>/<failure> with messages; what Jenkins, GitLab and GitHub
// reporters read) and JSON (every case with verdict, duration and
// transcript). Everything reported is already redacted.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "conformance/baseline.h"
#include "conformance/catalog.h"
#include "conformance/runner.h"

namespace flexkit::conform {

// `quiet` (--quiet): one line per case that is not PASS, and the summary.
class ConsoleReporter {
 public:
  ConsoleReporter(std::ostream& out, bool colour, bool quiet = false)
      : out_(out), colour_(colour), quiet_(quiet) {}
  void CaseStarted(const Case& c, std::size_t index, std::size_t total);
  // `finished`: how many results were printed before this one.
  void CaseFinished(const CaseResult& r, std::size_t finished, std::size_t total);
  // Ends with the failed cases, each rule with a fix hint, and a command
  // that reruns them: `replay_base` (how the run was started, selection
  // left out) with a --focus naming them.
  void Summary(const RunSummary& summary, const std::string& replay_base = "");

 private:
  std::string Paint(Grade grade, const std::string& text) const;
  std::ostream& out_;
  bool colour_;
  bool quiet_;
};

// What a report says of the run besides its results.
struct RunInfo {
  std::string driver;         // the executable graded
  std::string driver_name;    // "vendor/driver"
  std::string driver_sha256;  // of the executable; empty when unreadable
  std::string profile_file;   // empty: derived from init, or the bundled profile
  std::string kubernetes;     // the simulator's kubelet version profile
  std::string fixture;        // "none", "convoy-fake", "command"
  std::uint64_t seed = 0;     // of sequence/random
  int random_walks = SequenceOptions{}.random_walks;  // --random
  int depth = SequenceOptions{}.depth;                // --depth
  // Which part of the cases this report holds: shard i of n (0/1: all of
  // them), of the cases --focus and --skip select. `merge` checks that its
  // reports are every shard of one run, each once.
  int shard_index = 0;
  int shard_total = 1;
  std::string focus;
  std::string skip;
  std::string hostname;
  std::string started;         // ISO 8601 UTC
  bool flaky_allowed = false;  // --allow-flaky: a FLAKY case does not fail the gate
  // --baseline: the gate's verdict on each case against the earlier report.
  // In JUnit only a new failure is a <failure> (a still-failing case is a
  // passing testcase whose properties and system-out say so); JSON carries
  // it per case and as a whole.
  std::optional<BaselineComparison> baseline;
};
// The driver's path, name, sha256, this host and now; the rest is the caller's.
RunInfo DescribeRun(const std::string& driver, const std::string& driver_name);

// The JSON report's schema (conformance/report.schema.json): bumped when a
// field changes meaning or goes; new fields do not bump it.
inline constexpr int kReportSchemaVersion = 1;

// One testsuite named "flexconform: <driver name>", its properties the
// RunInfo; WARN cases carry a "verdict" property and a system-out.
std::string JunitXml(const RunSummary& summary, const RunInfo& info);
std::string JsonReport(const RunSummary& summary, const RunInfo& info);
// A JSON report read back: the baseline of --baseline, a shard of `merge`.
struct LoadedReport {
  RunSummary summary;  // results, wall, driver time, interrupted
  RunInfo info;
};
// Any schemaVersion up to ours; throws naming the file and what is wrong.
LoadedReport ReadJsonReport(const std::string& path);
// Shards of one run (flexconform --shard i/n on several CI workers) as one
// report: every case once, wall the longest shard's, driver time summed,
// interrupted if any was. The run info is the first shard's, as the whole
// run (shard 0/1). Throws, naming the reports, unless they are every shard
// 0..n-1 of one n, each once, of one run: the same driver (sha256), seed,
// sequence options and --focus/--skip. A lost upload never merges.
LoadedReport MergeReports(const std::vector<std::string>& paths);

// Writes `text` to `path`; throws naming the path.
void WriteReport(const std::string& path, const std::string& text);

}  // namespace flexkit::conform
