#pragma once
// The entry point of a driver binary, the C++ counterpart of Go's
// flexvolume.ExecDriver: `int main(int argc, char** argv) {
// MyDriver d; flexvolume::ExecDriver(d, argc, argv); }`.
#include <string>

#include "driver/sdk/dispatch.h"
#include "driver/sdk/driver.h"
#include "driver/sdk/logging.h"

namespace flexvolume {

struct ExecConfig {
  DispatchConfig dispatch;
  LogConfig log;  // no file and no syslog: no logging
};

// Runs one call and exits the process: exactly one newline-terminated JSON
// reply on stdout, exit 0 for Success and Not supported, 1 for Failure.
//
// Before the driver runs, stdout is moved to a private close-on-exec
// descriptor and fds 1 and 2 are pointed at /dev/null, so nothing a library
// or a child process (mkfs, mount helpers) prints can reach kubelet, and no
// child can hold kubelet's pipe open after the driver exits. Crashes still
// reply (see crash_guard.h).
[[noreturn]] void ExecDriver(Driver& driver, int argc, char** argv, const ExecConfig& config = {});

}  // namespace flexvolume
