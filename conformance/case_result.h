#pragma once
// The grade of one case and what a report shows for it.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "conformance/backend_events.h"

namespace flexkit::conform {

enum class Grade { kPass, kFail, kSkip, kWarn };
const char* GradeName(Grade grade);  // "PASS", "FAIL", "SKIP", "WARN"

struct CaseResult {
  std::string name;
  std::vector<std::string> tags;
  Grade grade = Grade::kPass;
  std::string reason;  // SKIP: why; FAIL: what was wrong; WARN: the warnings, joined
  std::string rule;  // FAIL/WARN: the rule broken, e.g. "F10 (protocol §7: unmount is idempotent)"
  std::vector<std::string> warnings;
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds driver_time{0};  // spent inside driver processes
  nlohmann::ordered_json transcript = nlohmann::ordered_json::array();  // secrets redacted
  CaseTimeline timeline;  // when each call ran, and the backend's requests meanwhile (HTML report)
};

// A FAIL shows the calls that led to it: one line per call (node, argv,
// exit, output, verdict, mount changes), secrets already redacted.
std::string FormatCalls(const nlohmann::ordered_json& transcript, std::size_t max_argv_bytes = 300);

}  // namespace flexkit::conform
