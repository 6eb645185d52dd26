#pragma once
// Runs selected cases, up to `jobs` at a time (and as many more `waits`
// cases, when jobs > 1: they wait out timeouts), each in a worker process of
// its own (its descendants are the case's, for the leak audit) and in its
// own case directory under the run directory, with fresh nodes and a fresh
// fixture, the tracker unwound and the leak audit done whatever happened. A run
// directory carries a marker with flexconform's pid; the next run sweeps
// those whose process is gone (a killed run), detaching their loop devices,
// but never one a --keep run left (its marker says so).
// A case whose harness stalls is stopped and is an ERROR (case_watchdog.h).
// A verb that hung gets a shorter deadline in the cases after (hung_verbs.h).
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "conformance/case_result.h"
#include "conformance/catalog.h"
#include "conformance/profile.h"

namespace flexkit::conform {

struct RunSettings {
  int repeat = 3;
  int jobs = 1;       // cases run at once
  int retries = 0;    // a FAILed case runs again up to this many times
  bool keep = false;  // leave the run dir for inspection
  // --fail-fast: no case starts after one FAILs (or is FLAKY, unless
  // flaky_allowed); the running ones finish.
  bool fail_fast = false;
  bool flaky_allowed = false;
  std::string run_root = "/tmp";  // run dirs are <run_root>/flexconform-<pid>
  std::string flexconform_dir;    // to find convoy-fake beside flexconform
  // A case that starts or ends no driver call for this long is stopped, its
  // processes, mounts and loop devices reclaimed; zero: StallLimit(profile).
  std::chrono::milliseconds stall_limit{0};
  // Set by SIGINT/SIGTERM: the running cases finish, no more start.
  const std::atomic<bool>* interrupted = nullptr;
  // `index`: the case's place in the selection.
  std::function<void(const Case&, std::size_t index, std::size_t total)> on_start;
  // `finished`: how many results came before this one (cases end out of order).
  std::function<void(const CaseResult&, std::size_t finished, std::size_t total)> on_result;
};

struct RunSummary {
  std::vector<CaseResult> results;
  std::chrono::milliseconds wall{0};
  std::chrono::milliseconds driver_time{0};
  std::string run_dir;
  bool interrupted = false;
  // What the run did besides grading: --fail-fast stopping it, the deadline
  // of a verb that hung shortened for the cases after (hung_verbs.h).
  std::vector<std::string> notes;
  // 0: nothing failed, 1: a case failed (or was FLAKY, unless allowed),
  // 2: a harness ERROR and no FAIL.
  int ExitCode(bool flaky_allowed = false) const;
};

RunSummary RunCases(const DriverProfile& profile, const std::vector<const Case*>& cases,
                    const RunSettings& settings);

// kubelet's probe of `driver`: init, run once and judged as kubelet does.
// Empty when kubelet would register the driver; otherwise kubelet's reason
// for not registering it (an undecodable reply, "capabilities": null, a
// non-boolean capability, a status other than Success, no answer).
std::string InitRefusal(const std::string& driver, const std::string& driver_name);

// The verdict on a driver kubelet refuses to register: protocol/init-reply
// FAILs with `refusal` (whether selected or not: it is why nothing else
// runs) and every selected case SKIPs for that reason.
RunSummary RefusedRun(const std::vector<const Case*>& cases, const std::string& refusal);

// Removes run dirs under `run_root` left by flexconform processes that no
// longer exist, except those kept with --keep; returns what it removed.
std::vector<std::string> SweepKilledRuns(const std::string& run_root);

}  // namespace flexkit::conform
