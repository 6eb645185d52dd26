#pragma once
// --baseline OLD.json: a release gate on what is new. Only a rule the
// baseline never saw broken fails the gate: a case that FAILs (or is
// FLAKY) now breaking such a rule is new. A case that FAILs now with rules
// all broken somewhere in the baseline is still failing, even when it
// passed there (a fixed bug lets it get further, to a defect already
// known): fixing a bug never fails the gate. A case that FAILed before and
// does not now is fixed. Rules are told apart by their code and text, not
// by the reference they cite.
#include <map>
#include <string>
#include <vector>

#include "conformance/case_result.h"

namespace flexkit::conform {

enum class BaselineVerdict { kNew, kStillFailing, kFixed };
const char* BaselineVerdictName(BaselineVerdict verdict);  // "new", "still failing", "fixed"

struct BaselineComparison {
  std::string file;  // the baseline report
  // "case: FAIL now, PASS in the baseline (rule)", "case: newly breaks rule"
  std::vector<std::string> new_failures;
  std::vector<std::string> fixed;  // case names
  // "case", or "case: FAIL now, PASS in the baseline; its rules are broken
  // there too (rule, in other-case)"
  std::vector<std::string> still_failing;
  std::map<std::string, BaselineVerdict> verdicts;  // by case name; cases of none are absent
};
// `flaky_allowed`: a FLAKY case counts as passing (--allow-flaky).
BaselineComparison CompareWithBaseline(const std::vector<CaseResult>& baseline,
                                       const std::vector<CaseResult>& now,
                                       bool flaky_allowed = false);

// What identifies a rule across flexconform versions: its F-code and its
// text, the reference cited left out ("F9 (protocol §7: mount is
// idempotent)" is "F9: mount is idempotent").
std::string RuleIdentity(const std::string& rule);

}  // namespace flexkit::conform
