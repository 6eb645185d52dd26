#pragma once
// kubelet's NewOptionsForDriver (reference §4): the options map each verb
// receives, in build order fsType, readwrite, pvOrVolumeName, extra options
// (mount only: pod info, fsGroup, secrets base64), then user options, which
// override anything. Serialised as Go json.Marshal does.
#include <map>
#include <string>

#include "simulator/version_profile.h"
#include "simulator/volume_spec.h"

namespace flexkit::sim {

inline constexpr const char* kSecretKeyPrefix = "kubernetes.io/secret/";

// `extras` only for mount; nullptr for every other verb.
std::map<std::string, std::string> BuildOptions(const VersionProfile& profile,
                                                const VolumeSpec& spec, const MountExtras* extras);
std::string OptionsJson(const VersionProfile& profile, const VolumeSpec& spec,
                        const MountExtras* extras);

// Standard base64 with padding, as Go's base64.StdEncoding.
std::string Base64(std::string_view bytes);

}  // namespace flexkit::sim
