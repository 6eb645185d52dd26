#pragma once
// `flexsim call`: one verb, built and judged as kubelet would, run on a
// throwaway node (its own mount namespace) so nothing the driver mounts
// outlives the call; with what kubelet's FlexVolume plugin does around it
// (skips, the other driver calls it makes, fallbacks, directory removal).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/driver_invoker.h"
#include "simulator/volume_spec.h"

namespace flexkit::sim {

struct CallCommand {
  std::string driver;  // path; its folder name (vendor~driver) gives the driver name
  std::string node = "node-1";
  std::string profile = "current";
  std::string verb;
  std::vector<std::string> args;  // the verb's non-JSON arguments (README)
  VolumeSpec volume;
  MountExtras pod;
  std::map<std::string, std::string> env;
  std::string run_dir;  // empty: a temporary one, removed afterwards
  std::string transcript;
  bool strict = false;
  CallSettings settings;
};

// Prints the call's record as JSON on stdout, each text over 64 KiB cut to
// its head and tail (the --transcript file keeps it whole). Returns the
// process exit code:
// 0 the kubelet operation succeeded (a Not supported whose fallback did
// included), 1 it failed, 3 the harness had to step in (would hang kubelet,
// output cap).
int RunCallCommand(CallCommand command);

// "<plugindir>/vendor~drv/drv" -> "vendor/drv" (reference §1.1).
std::string DriverNameFromPath(const std::string& executable);

}  // namespace flexkit::sim
