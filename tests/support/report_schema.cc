#include "tests/support/report_schema.h"

#include "tests/support/subprocess.h"

namespace flexkit::testing {

std::string ReportSchemaProblems(const std::string& report_path) {
  static constexpr const char* kValidate = R"(
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
validator = jsonschema.Draft202012Validator(schema)
for e in sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path)):
    print("/".join(str(p) for p in e.absolute_path) + ": " + e.message[:300])
)";
  // Debian's interpreter, where python3-jsonschema is installed.
  auto r = RunProcess({"/usr/bin/python3", "-c", kValidate, FLEXKIT_REPORT_SCHEMA, report_path});
  if (r.exit_code != 0) return "the schema check could not run: " + r.err;
  return r.out;
}

}  // namespace flexkit::testing
