#pragma once
// --baseline OLD.json: a release gate on what is new. A case that FAILs
// (or is FLAKY) now and did not before, or that breaks a rule it did not
// break before, is new; a case that FAILed before and does not now is
// fixed; one that FAILs with the same rules is still failing.
#include <string>
#include <vector>

#include "conformance/case_result.h"

namespace flexkit::conform {

struct BaselineComparison {
  // "case: FAIL now, PASS in the baseline (rule)", "case: newly breaks rule"
  std::vector<std::string> new_failures;
  std::vector<std::string> fixed;          // case names
  std::vector<std::string> still_failing;  // case names
};
// `flaky_allowed`: a FLAKY case counts as passing (--allow-flaky).
BaselineComparison CompareWithBaseline(const std::vector<CaseResult>& baseline,
                                       const std::vector<CaseResult>& now,
                                       bool flaky_allowed = false);

}  // namespace flexkit::conform
