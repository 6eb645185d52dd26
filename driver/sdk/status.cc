#include "driver/sdk/status.h"

#include <nlohmann/json.hpp>

namespace flexvolume {

DriverStatus Succeed(std::string message) {
  DriverStatus s;
  s.status = kStatusSuccess;
  s.message = std::move(message);
  return s;
}

DriverStatus Fail(std::string message) {
  DriverStatus s;
  s.status = kStatusFailure;
  s.message = std::move(message);
  return s;
}

DriverStatus NotSupported(std::string message) {
  DriverStatus s;
  s.status = kStatusNotSupported;
  s.message = std::move(message);
  return s;
}

int ExitCodeFor(const DriverStatus& status) { return status.IsFailure() ? 1 : 0; }

std::string RenderReply(const DriverStatus& status) {
  // ordered_json keeps "status" first, which is what people grep for.
  nlohmann::ordered_json j;
  j["status"] = status.status;
  if (!status.message.empty()) j["message"] = status.message;
  if (status.device) j["device"] = *status.device;
  if (status.volume_name) j["volumeName"] = *status.volume_name;
  if (status.attached) j["attached"] = *status.attached;
  if (status.capabilities) {
    const Capabilities& c = *status.capabilities;
    j["capabilities"] = {{"attach", c.attach},
                         {"selinuxRelabel", c.selinux_relabel},
                         {"supportsMetrics", c.supports_metrics},
                         {"fsGroup", c.fs_group},
                         {"requiresFSResize", c.requires_fs_resize}};
  }
  // Invalid UTF-8 in a message (e.g. from a hostile path) is replaced, never
  // allowed to make rendering throw.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace flexvolume
