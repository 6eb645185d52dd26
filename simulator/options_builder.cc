#include "simulator/options_builder.h"

namespace flexkit::sim {

std::string Base64(std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::map<std::string, std::string> BuildOptions(const VersionProfile& profile,
                                                const VolumeSpec& spec, const MountExtras* extras) {
  std::map<std::string, std::string> o;
  o["kubernetes.io/fsType"] = spec.fs_type;
  o["kubernetes.io/readwrite"] = spec.read_only ? "ro" : "rw";
  if (profile.sends_pv_or_volume_name) o["kubernetes.io/pvOrVolumeName"] = spec.name;
  if (extras != nullptr) {
    if (profile.sends_pod_info) {
      o["kubernetes.io/pod.name"] = extras->pod_name;
      o["kubernetes.io/pod.namespace"] = extras->pod_namespace;
      o["kubernetes.io/pod.uid"] = extras->pod_uid;
      o["kubernetes.io/serviceAccount.name"] = extras->service_account;
    }
    if (extras->fs_group && !profile.fs_group_key.empty()) {
      o[profile.fs_group_key] = std::to_string(*extras->fs_group);
    }
    for (const auto& [key, value] : extras->secret) o[kSecretKeyPrefix + key] = Base64(value);
  }
  for (const auto& [key, value] : spec.options) o[key] = value;
  return o;
}

std::string OptionsJson(const VersionProfile& profile, const VolumeSpec& spec,
                        const MountExtras* extras) {
  return gojson::GoMarshalStringMap(BuildOptions(profile, spec, extras), profile.escapes);
}

}  // namespace flexkit::sim
