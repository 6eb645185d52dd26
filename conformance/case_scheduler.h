#pragma once
// Which case runs next, and what a finished attempt means for the run: the
// order (slow cases first), the slots (a CPU slot per job, and as many
// waiting slots for [waits] cases, which wait out a dead backend's timeouts
// using no CPU), the retry policy (--retries: a FAIL runs again, one that
// then passes is FLAKY) and --fail-fast. No process and no clock: the
// runner's worker pool starts what this hands out and gives back results.
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conformance/case_result.h"

namespace flexkit::conform {

// One run of a case: its first (attempt 0), or a retry of a FAIL.
struct Attempt {
  std::size_t index = 0;  // in the selection
  int attempt = 0;
  bool waiting_slot = false;  // runs in a waiting slot, not a CPU slot
  // Names the case dir and ends the unique prefix: a retry gets fresh ones.
  std::string Suffix() const;
};

struct SchedulerPolicy {
  std::size_t jobs = 1;
  int retries = 0;
  bool fail_fast = false;
  bool flaky_allowed = false;
  // false: nothing runs beside the `jobs`, not even a case that only waits
  // (a profile's maxJobs: its backend cannot take more cases at once).
  bool waiting_slots = true;
};

class CaseScheduler {
 public:
  // Each selected case's tags ("slow", "waits") decide the order and slots;
  // `on_result` hears each final verdict with how many came before it.
  using OnResult = std::function<void(const CaseResult&, std::size_t finished, std::size_t total)>;
  CaseScheduler(std::vector<std::vector<std::string>> tags, SchedulerPolicy policy,
                OnResult on_result);

  // The next attempt to start, its slot taken; nothing when no slot is free
  // for what is pending, nothing is pending, or --fail-fast stopped the run.
  std::optional<Attempt> Next();
  // A started attempt's result (skipped, run, or an ERROR): its slot is
  // freed, and it is reported or its case queued again for a retry.
  void Finish(const Attempt& attempt, CaseResult result);

  bool Running() const { return running_ > 0; }
  bool Pending() const { return !pending_.empty(); }
  // --fail-fast: the case whose failure stopped the run, "" while none has.
  const std::string& FailedFirst() const { return failed_first_; }
  // The final verdicts in selection order; cases never started are left out.
  std::vector<CaseResult> TakeResults();

 private:
  bool Waits(std::size_t index) const;
  void Report(std::size_t index, CaseResult result);

  std::vector<std::vector<std::string>> tags_;
  SchedulerPolicy policy_;
  OnResult on_result_;
  std::size_t waiting_slots_;
  std::deque<Attempt> pending_;
  std::size_t running_ = 0;
  std::size_t in_waiting_slots_ = 0;
  std::map<std::size_t, CaseResult> first_failure_;  // of a case being retried
  std::vector<std::optional<CaseResult>> results_;
  std::size_t finished_ = 0;
  std::string failed_first_;
};

}  // namespace flexkit::conform
