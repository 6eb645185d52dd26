#pragma once
// flexconform --replay LOG: production traffic against a new driver. Every
// call of a flexsim-record-shim log is made again, in its order and shape,
// against the profile's driver on a simulated node (the recorded kubelet
// root mapped to the node's, devices mapped to what the new driver's
// attach and waitforattach return, recorded secrets replaced by the
// profile's), with kubelet's own steps around it (prepare-for-mount, the
// Not-supported fallbacks, removing a dir after teardown), and each
// outcome is compared with the recorded one.
#include <string>
#include <vector>

#include "conformance/profile.h"
#include "simulator/recording.h"

namespace flexkit::conform {

struct ReplayDifference {
  int line = 0;  // of the record in the log
  std::string verb;
  std::string what;
};

struct ReplayResult {
  std::size_t calls = 0;
  std::vector<ReplayDifference> differences;
  std::vector<std::string> notes;  // what the replay had to stand in for
};

// Needs root (the node is a mount namespace). `run_root`: where the run
// directory goes; it is removed afterwards.
ReplayResult Replay(const DriverProfile& profile, const std::vector<sim::RecordedCall>& calls,
                    const std::string& run_root);

}  // namespace flexkit::conform
