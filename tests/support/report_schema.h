#pragma once
// Checks a flexconform JSON report against conformance/report.schema.json
// (with Debian's python3-jsonschema), so every report a test writes also
// proves the schema users are promised.
#include <string>

namespace flexkit::testing {

// Empty when `report_path` is valid; otherwise every schema error, one per line.
std::string ReportSchemaProblems(const std::string& report_path);

}  // namespace flexkit::testing
