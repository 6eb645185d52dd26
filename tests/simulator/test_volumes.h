#pragma once
// The PV the argv and options tests build their options from: pv-1 of
// driver foo/cifs, ext4, with the option server=x.
#include "simulator/volume_spec.h"

namespace flexkit::sim::testing {

inline VolumeSpec Pv1() {
  VolumeSpec spec;
  spec.name = "pv-1";
  spec.driver = "foo/cifs";
  spec.fs_type = "ext4";
  spec.options = {{"server", "x"}};
  spec.inline_volume = false;
  return spec;
}

}  // namespace flexkit::sim::testing
