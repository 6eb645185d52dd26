#pragma once
// The JSON shape of a verdict, as `flexsim judge` prints it and transcripts
// record it: {"outcome", "status", "message", "device", "attached",
// "volumeName", "capabilities", "error"} (+ "warnings" when strict). Decoded
// fields are null for decode errors; capabilities is null unless decoded or
// defaulted.
#include <nlohmann/json.hpp>

#include "simulator/judge.h"

namespace flexkit::sim {

nlohmann::ordered_json VerdictToJson(const Verdict& verdict, bool strict);
nlohmann::ordered_json CapabilitiesToJson(const DriverCapabilities& capabilities);

}  // namespace flexkit::sim
