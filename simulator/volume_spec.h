#pragma once
// What kubelet knows about one volume of one pod when it calls a driver: the
// flexVolume source (inline or from the PV) and, for mount, the pod.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace flexkit::sim {

struct VolumeSpec {
  std::string name;    // spec.Name(): the PV name, or the pod's volume name if inline
  std::string driver;  // flexVolume.driver, e.g. "k8s/dummy"
  std::string fs_type;
  bool read_only = false;  // inline: flexVolume.readOnly; PV: the claim's readOnly
  std::map<std::string, std::string> options;
  bool inline_volume = true;
  bool read_write_once_only = false;  // PV access modes are exactly [ReadWriteOnce]
};

// The extra keys only `mount` receives.
struct MountExtras {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string service_account = "default";
  std::optional<std::int64_t> fs_group;
  std::map<std::string, std::string> secret;  // raw bytes per key; sent base64
  // Why the volume's secret could not be read: SetUp fails with it after
  // preparing the pod dir (mounter.go SetUpAt, addSecretsToOptions).
  std::string secret_error;
};

}  // namespace flexkit::sim
