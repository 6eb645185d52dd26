#include "conformance/case_scheduler.h"

#include <algorithm>

namespace flexkit::conform {
namespace {

bool Tagged(const std::vector<std::string>& tags, const char* tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

}  // namespace

std::string Attempt::Suffix() const {
  return std::to_string(index) + (attempt == 0 ? "" : "t" + std::to_string(attempt));
}

CaseScheduler::CaseScheduler(std::vector<std::vector<std::string>> tags, SchedulerPolicy policy,
                             OnResult on_result)
    : tags_(std::move(tags)),
      policy_(policy),
      on_result_(std::move(on_result)),
      // None with -j 1, which runs one case at a time.
      waiting_slots_(policy.waiting_slots && policy.jobs > 1 ? policy.jobs : 0),
      results_(tags_.size()) {
  policy_.jobs = std::max<std::size_t>(1, policy_.jobs);
  // Slow cases start first, so the run does not end waiting on one of them.
  std::vector<std::size_t> order(tags_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(),
                        [this](std::size_t i) { return Tagged(tags_[i], "slow"); });
  for (std::size_t i : order) pending_.push_back({i, 0, false});
}

bool CaseScheduler::Waits(std::size_t index) const { return Tagged(tags_[index], "waits"); }

// A `waits` case for a free waiting slot; for a free CPU slot another case,
// or a `waits` case when no other is left.
std::optional<Attempt> CaseScheduler::Next() {
  if (!failed_first_.empty()) return std::nullopt;
  auto first = [this](bool waiting) {
    return std::find_if(pending_.begin(), pending_.end(),
                        [&](const Attempt& a) { return Waits(a.index) == waiting; });
  };
  auto chosen = pending_.end();
  bool waiting_slot = false;
  if (in_waiting_slots_ < waiting_slots_) {
    chosen = first(true);
    waiting_slot = chosen != pending_.end();
  }
  if (chosen == pending_.end() && running_ - in_waiting_slots_ < policy_.jobs) {
    chosen = first(false);
    if (chosen == pending_.end()) chosen = pending_.begin();
  }
  if (chosen == pending_.end()) return std::nullopt;
  Attempt next = *chosen;
  pending_.erase(chosen);
  next.waiting_slot = waiting_slot;
  ++running_;
  if (waiting_slot) ++in_waiting_slots_;
  return next;
}

void CaseScheduler::Finish(const Attempt& attempt, CaseResult r) {
  --running_;
  if (attempt.waiting_slot) --in_waiting_slots_;
  const std::size_t index = attempt.index;
  // A FAIL is run again; an ERROR only once a FAIL started the retries.
  const bool failed = r.grade == Grade::kFail || r.grade == Grade::kError;
  if (failed && attempt.attempt < policy_.retries &&
      (r.grade == Grade::kFail || first_failure_.count(index))) {
    first_failure_.emplace(index, std::move(r));
    pending_.push_front({index, attempt.attempt + 1, false});  // before new cases
    return;
  }
  if (auto first = first_failure_.find(index); first != first_failure_.end()) {
    CaseResult verdict = std::move(first->second);
    first_failure_.erase(first);
    const std::string run = std::to_string(attempt.attempt + 1);
    if (!failed) {
      // The failing run's findings stand; the gate decides (--allow-flaky).
      verdict.grade = Grade::kFlaky;
      verdict.reason = "FAILed, then " + std::string(GradeName(r.grade)) + " on run " + run +
                       " (--retries): " + verdict.reason;
    } else {
      verdict.reason += " (FAILed on all " + run + " runs)";
    }
    verdict.duration += r.duration;
    verdict.driver_time += r.driver_time;
    r = std::move(verdict);
  }
  Report(index, std::move(r));
}

void CaseScheduler::Report(std::size_t index, CaseResult r) {
  if (on_result_) on_result_(r, finished_++, tags_.size());
  const bool failing =
      r.grade == Grade::kFail || (r.grade == Grade::kFlaky && !policy_.flaky_allowed);
  if (policy_.fail_fast && failing && failed_first_.empty()) failed_first_ = r.name;
  results_[index] = std::move(r);
}

std::vector<CaseResult> CaseScheduler::TakeResults() {
  std::vector<CaseResult> out;
  for (auto& r : results_) {
    if (r) out.push_back(std::move(*r));  // never started: the run was interrupted
  }
  return out;
}

}  // namespace flexkit::conform
