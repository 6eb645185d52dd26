#include "tests/support/flexconform_verdicts.h"

#include <nlohmann/json.hpp>

namespace flexkit::testing {

FlexconformVerdicts RunFlexconformVerdicts(const TempDir& dir, std::vector<std::string> args,
                                           const RunOptions& options) {
  args.insert(args.begin(), BuiltBinary("conformance/flexconform"));
  args.insert(args.end(), {"--json", dir.Join("r.json"), "--run-root", dir.path()});
  FlexconformVerdicts run;
  run.process = RunProcess(args, options);
  const auto doc = nlohmann::json::parse(ReadFileText(dir.Join("r.json")), nullptr, false);
  if (doc.is_discarded()) return run;
  for (const auto& c : doc["cases"]) {
    run.verdicts[c["name"]] = c["verdict"];
    run.reasons[c["name"]] = c["reason"];
  }
  return run;
}

}  // namespace flexkit::testing
