#pragma once
// flexsim check-shapes: holds each call a real cluster made (a
// flexsim-record-shim log) against the call flexsim itself makes for that
// kubelet version. For every recorded call, flexsim rebuilds the argv from
// what the call says about itself (the volume, the pod, the paths) with its
// own ArgvBuilder and OptionsJson, and each difference (a verb or an arity
// flexsim never uses, an option key flexsim would add or leave out, key
// order or escaping, a path that is not kubelet's shape) is a simulator
// fidelity gap.
#include <string>
#include <vector>

#include "simulator/recording.h"
#include "simulator/version_profile.h"

namespace flexkit::sim {

struct ShapeGap {
  int line = 0;  // of the record in the log
  std::string verb;
  std::string what;
};

// `driver_name` ("vendor/driver") names the paths' driver parts; empty:
// taken from the first path that shows it.
std::vector<ShapeGap> CheckShapes(const std::vector<RecordedCall>& calls,
                                  const VersionProfile& profile, std::string driver_name = "");

}  // namespace flexkit::sim
