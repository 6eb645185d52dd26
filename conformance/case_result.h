#pragma once
// The grade of one case and what a report shows for it.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "conformance/backend_events.h"

namespace flexkit::conform {

// kError: the harness itself broke (an exception of its own, a fixture
// that would not start); the case has no verdict on the driver.
// kFlaky: FAILed, then passed when run again (--retries); its findings are
// the failing run's.
enum class Grade { kPass, kFail, kSkip, kWarn, kError, kFlaky };
const char* GradeName(Grade grade);  // "PASS", "FAIL", "SKIP", "WARN", "ERROR", "FLAKY"
// The grade GradeName names; throws for any other text.
Grade GradeNamed(const std::string& name);

// One rule a case saw broken (or the harness error that stopped it).
struct Finding {
  Finding() = default;
  Finding(Grade g, std::string broken, std::string reason,
          std::optional<std::size_t> judged_call = std::nullopt)
      : grade(g), rule(std::move(broken)), why(std::move(reason)), call(judged_call) {}
  Grade grade = Grade::kFail;  // kFail or kError
  std::string rule;            // "F1/F2/F3 one-json-reply: ..." (RULES.md)
  std::string why;
  // The call the failing check judged (whose reply or effect broke the
  // rule): its position among the transcript's calls, 0 first. Empty when
  // the finding is about no call (a leak, a fixture).
  std::optional<std::size_t> call;
};

struct CaseResult {
  std::string name;
  std::vector<std::string> tags;
  Grade grade = Grade::kPass;
  std::string reason;  // SKIP: why; FAIL/ERROR: every finding's why, joined; WARN: the warnings
  // FAIL/ERROR/WARN: the first rule broken, e.g. "F10 unmount-idempotent: ..."
  std::string rule;
  // Every rule the case saw broken, in the order seen, each once (FAIL and
  // ERROR findings; warnings are in `warnings`).
  std::vector<Finding> findings;
  std::vector<std::string> warnings;
  // A case that stopped at a defect before its own checks ran: which of
  // its rules it never judged and what stopped it ("" when it judged them
  // all, or none was due), so a report shows what was not checked.
  std::string not_checked;
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds driver_time{0};  // spent inside driver processes
  nlohmann::ordered_json transcript = nlohmann::ordered_json::array();  // secrets redacted
  CaseTimeline timeline;  // when each call ran, and the backend's requests meanwhile (HTML report)
};

// Adds `finding` (kFail or kError) unless the same one is already there,
// and regrades `r`: FAIL (a rule the driver broke stands) over ERROR over
// anything else.
void AddFinding(CaseResult& r, Finding finding);
// The distinct rules of the FAIL findings.
std::vector<std::string> RulesBroken(const CaseResult& r);
// The case's findings; a result made without any (a FAIL given only a rule
// and a reason) has that one.
std::vector<Finding> FindingsOf(const CaseResult& r);

// A result as the JSON report's "cases" entries hold it (worker processes
// hand their results back in it, `merge` and `--baseline` read it), and
// back: ResultFromJson(ResultToJson(r)) has r's verdict, findings,
// transcript and timeline, except that a call's output over 16 KiB keeps
// its first and last 8 KiB, marked where it was cut, and its size in
// "output_bytes". Throws naming what is missing or mistyped.
nlohmann::ordered_json ResultToJson(const CaseResult& r);
CaseResult ResultFromJson(const nlohmann::ordered_json& j);

// `argv` joined with spaces for people to read, at most about `max_bytes`:
// beyond that, values are shortened ("abc...(N bytes)"), the longest first
// and option values before paths, never the options a rule is about: in an options JSON every key
// stays, and the values of kubernetes.io/readwrite, kubernetes.io/fsType, both fsGroup keys and
// kubernetes.io/secret/* (already redacted) stay whole.
std::string PrintedArgv(const std::vector<std::string>& argv, std::size_t max_bytes);

// A FAIL shows the calls that led to it: one line per call (node, argv,
// exit, output, verdict, mount changes), secrets already redacted.
std::string FormatCalls(const nlohmann::ordered_json& transcript, std::size_t max_argv_bytes = 800);

}  // namespace flexkit::conform
