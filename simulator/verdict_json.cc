#include "simulator/verdict_json.h"

namespace flexkit::sim {

nlohmann::ordered_json CapabilitiesToJson(const DriverCapabilities& c) {
  return {{"attach", c.attach},
          {"selinuxRelabel", c.selinux_relabel},
          {"supportsMetrics", c.supports_metrics},
          {"fsGroup", c.fs_group},
          {"requiresFSResize", c.requires_fs_resize}};
}

nlohmann::ordered_json VerdictToJson(const Verdict& v, bool strict) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["outcome"] = OutcomeName(v.outcome);
  for (const char* key :
       {"status", "message", "device", "attached", "volumeName", "capabilities"}) {
    j[key] = nullptr;
  }
  if (v.status) {
    const DriverStatus& s = *v.status;
    j["status"] = s.status;
    j["message"] = s.message;
    j["device"] = s.device;
    j["attached"] = s.attached;
    j["volumeName"] = s.volume_name;
    if (s.capabilities) j["capabilities"] = CapabilitiesToJson(*s.capabilities);
  }
  j["error"] = v.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.error);
  if (strict) j["warnings"] = v.warnings;
  return j;
}

}  // namespace flexkit::sim
