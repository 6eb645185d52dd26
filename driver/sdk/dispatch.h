#pragma once
// Maps a kubelet argv onto a Driver method and returns the reply, without
// touching stdout, stderr or the process: the testable core of ExecDriver.
#include <string>
#include <vector>

#include "driver/sdk/driver.h"
#include "driver/sdk/status.h"

namespace flexvolume {

struct DispatchConfig {
  // Also accept the argv shapes of kubelet <= 1.5 (`attach <json>`,
  // `detach <device>`, `mount <dir> <device> <json>`, which is dispatched to
  // MountDevice) and the 1.6 order `isattached <node> <json>`.
  bool accept_legacy_argv = false;
};

// `args` is argv without argv[0]: args[0] is the verb. Unknown verbs get
// Not supported; a missing verb, wrong arity, malformed options, an invalid
// secret or an exception thrown by the driver get a Failure whose message
// says what was expected and never quotes an argument. Every message is
// scrubbed of the secrets seen so far.
DriverStatus Dispatch(Driver& driver, const std::vector<std::string>& args,
                      const DispatchConfig& config = {});

// The call as it may be logged: options JSON with secret values redacted.
std::string DescribeCall(const std::vector<std::string>& args);

}  // namespace flexvolume
