#pragma once
// The decision table of reference §3.2: how kubelet's driver-call.go (Run +
// handleCmdResponse) turns an exit status and the combined output into a
// result. Pure: no process, no clock.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/driver_status.h"

namespace flexkit::sim {

// How the driver process ended.
struct ExitStatus {
  int exit_code = 0;  // valid when signal == 0
  int signal = 0;     // the signal that killed it, 0 if it exited
  // Killed by kubelet's own waitforattach timer (only that verb has one).
  bool killed_by_kubelet_timeout = false;

  bool ok() const { return signal == 0 && exit_code == 0; }
  // Go's exec.ExitError text: "exit status 1", "signal: killed".
  std::string GoExecError() const;
};

enum class Outcome { kSuccess, kNotSupported, kFailure, kDecodeError };
const char* OutcomeName(Outcome outcome);  // "success", "not_supported", ...

struct Verdict {
  Outcome outcome = Outcome::kDecodeError;
  // The struct as decoding left it; nullopt for decode errors and timeouts.
  std::optional<DriverStatus> status;
  std::string error;                  // the error kubelet returns; empty on success
  std::vector<std::string> warnings;  // strict mode: tolerated by kubelet, but wrong
};

// Judges one call of `verb`. Warnings are always computed; callers decide
// whether to show them (--strict).
Verdict Judge(std::string_view verb, const ExitStatus& exit, std::string_view combined_output);

}  // namespace flexkit::sim
