#pragma once
// A driver verb that hung (ran into the harness deadline) should cost a run
// its full deadline once, not once per case: a driver whose every mount
// hangs would otherwise hold a CI job for cases x deadline. The first hang
// of each verb is written to a log in the run directory (cases run in
// worker processes of their own); every case started after it gives that
// verb a shorter deadline, derived from the one it hung at, and its hang
// findings and the run's summary say so.
#include <chrono>
#include <string>
#include <vector>

#include "conformance/case_result.h"
#include "conformance/profile.h"
#include "simulator/process_runner.h"

namespace flexkit::conform {

struct Hang {
  std::string verb;
  Millis deadline{0};  // the deadline it ran into
  std::string case_name;
};

// One run's hangs, appended by its workers (one line each, O_APPEND).
class HangLog {
 public:
  explicit HangLog(std::string path) : path_(std::move(path)) {}
  void Add(const Hang& hang, bool at_shortened_deadline) const;
  std::vector<Hang> FirstHangs() const;  // of each verb, in the order seen
  std::vector<Hang> Rehangs() const;     // those at a shortened deadline

 private:
  std::vector<std::pair<bool, Hang>> Read() const;
  std::string path_;
};

// The deadline a verb gets once it hung at `hung_at`: a fifth, at least 2 s.
Millis ShortenedDeadline(Millis hung_at);

// `profile` with the deadline of every verb in `hangs` shortened (never lengthened).
DriverProfile WithHungVerbsShortened(const DriverProfile& profile, const std::vector<Hang>& hangs);

// Logs each driver call of case `case_name` that runs into its deadline
// (a call whose first argument is a kubelet verb).
class HangRecorder : public sim::ProcessRunner {
 public:
  HangRecorder(sim::ProcessRunner& inner, const HangLog& log, std::string case_name,
               std::vector<Hang> shortened)
      : inner_(inner),
        log_(log),
        case_name_(std::move(case_name)),
        shortened_(std::move(shortened)) {}
  sim::ProcessResult Run(const sim::ProcessSpec& spec) override;

 private:
  sim::ProcessRunner& inner_;
  const HangLog& log_;
  std::string case_name_;
  std::vector<Hang> shortened_;
};

// Each hang finding (F16) of a verb in `shortened` gets why it came sooner.
void ExplainShortenedHangs(CaseResult& r, const std::vector<Hang>& shortened,
                           const DriverProfile& profile);

// For the run's summary: each verb that hung and what later cases got.
std::vector<std::string> HangNotes(const HangLog& log, const DriverProfile& profile);

}  // namespace flexkit::conform
