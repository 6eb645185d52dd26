#pragma once
// Runs the built flexconform with a JSON report in a temporary dir and
// reads back each case's verdict and reason, for tests that judge a run
// case by case.
#include <map>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::testing {

struct FlexconformVerdicts {
  ProcessResult process;
  std::map<std::string, std::string> verdicts;  // case -> verdict
  std::map<std::string, std::string> reasons;   // case -> reason
};

// flexconform `args` plus --json and --run-root in `dir`; verdicts empty
// when the report is missing or not JSON.
FlexconformVerdicts RunFlexconformVerdicts(const TempDir& dir, std::vector<std::string> args,
                                           const RunOptions& options);

}  // namespace flexkit::testing
