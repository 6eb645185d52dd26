#pragma once
// The reply of a FlexVolume driver: kubelet's DriverStatus (reference
// flexvolume-protocol.md §3). Exactly one of these is printed per call.
#include <optional>
#include <string>

namespace flexvolume {

// The only status strings kubelet treats specially; anything else is a failure.
inline constexpr const char* kStatusSuccess = "Success";
inline constexpr const char* kStatusFailure = "Failure";
inline constexpr const char* kStatusNotSupported = "Not supported";

// Reported by `init`. The defaults are kubelet's own, so a driver only sets
// what differs; every field is always rendered as a JSON boolean.
struct Capabilities {
  bool attach = true;
  bool selinux_relabel = true;
  bool supports_metrics = false;
  bool fs_group = true;
  bool requires_fs_resize = true;
};

struct DriverStatus {
  std::string status = kStatusSuccess;
  std::string message;                       // omitted when empty
  std::optional<std::string> device;         // attach, waitforattach
  std::optional<std::string> volume_name;    // getvolumename (kubelet ignores it)
  std::optional<bool> attached;              // isattached: always rendered when set
  std::optional<Capabilities> capabilities;  // init

  bool IsSuccess() const { return status == kStatusSuccess; }
  bool IsNotSupported() const { return status == kStatusNotSupported; }
  bool IsFailure() const { return !IsSuccess() && !IsNotSupported(); }
};

DriverStatus Succeed(std::string message = "");
DriverStatus Fail(std::string message);
DriverStatus NotSupported(std::string message = "");

// 0 for Success and Not supported, 1 otherwise: kubelet treats a Success
// with a non-zero exit as an error, so the two must agree.
int ExitCodeFor(const DriverStatus& status);

// The reply as one compact JSON document followed by a newline.
std::string RenderReply(const DriverStatus& status);

}  // namespace flexvolume
