#include "simulator/version_profile.h"

#include <stdexcept>

namespace flexkit::sim {
namespace {

std::vector<VersionProfile> MakeProfiles() {
  VersionProfile v17;
  v17.name = "1.7";
  v17.sends_pv_or_volume_name = true;
  v17.sends_pod_info = true;
  v17.fs_group_key = "kubernetes.io/fsGroup";
  v17.honours_capabilities = true;
  v17.plugin_name_prefix = "flexvolume-";

  VersionProfile v115 = v17;
  v115.name = "1.15";
  v115.fs_group_key = "kubernetes.io/mounterArgs.FsGroup";
  v115.has_expand_verbs = true;

  VersionProfile current = v115;
  current.name = "current";
  current.plugin_name_prefix = "";
  current.escapes = gojson::GoEscapeStyle::kGo122;

  return {v17, v115, current};
}

const std::vector<VersionProfile>& Profiles() {
  static const std::vector<VersionProfile> profiles = MakeProfiles();
  return profiles;
}

}  // namespace

const VersionProfile& FindProfile(std::string_view name) {
  for (const auto& p : Profiles()) {
    if (p.name == name) return p;
  }
  std::string known;
  for (const auto& n : ProfileNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown version profile \"" + std::string(name) +
                              "\" (known: " + known + ")");
}

std::vector<std::string> ProfileNames() {
  std::vector<std::string> names;
  for (const auto& p : Profiles()) names.push_back(p.name);
  return names;
}

}  // namespace flexkit::sim
