#pragma once
// What changed in kubelet's calling convention across releases (reference
// §9), as switches. Profiles: 1.7 (through 1.14), 1.15 (through the last
// release with the "flexvolume-" prefix), current. 1.6 and 1.5 are not
// emulated (README: their flows are other code, not switches on this one).
#include <string>
#include <string_view>
#include <vector>

#include "gojson/encode.h"

namespace flexkit::sim {

struct VersionProfile {
  std::string name;
  bool sends_pv_or_volume_name = false;  // 1.7+ (k/k#46249)
  bool sends_pod_info = false;           // 1.7+ (k/k#39488), mount only
  std::string fs_group_key;              // "" when fsGroup is not sent
  bool honours_capabilities = false;     // 1.7+; 1.6 took every driver as attachable
  bool has_expand_verbs = false;         // 1.13+
  std::string plugin_name_prefix;        // "flexvolume-" in 1.7 .. ~1.19
  gojson::GoEscapeStyle escapes = gojson::GoEscapeStyle::kBeforeGo122;
};

// The named profile; throws std::invalid_argument naming the known ones.
const VersionProfile& FindProfile(std::string_view name);
std::vector<std::string> ProfileNames();

}  // namespace flexkit::sim
