#pragma once
// What the API server holds, as far as volumes are concerned: pods, PVs,
// PVCs, Secrets, and each node's status (volumesAttached written by whoever
// attaches, volumesInUse written by the node's kubelet).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulator/volume_spec.h"

namespace flexkit::sim {

struct FlexSource {
  std::string driver;
  std::string fs_type;
  bool read_only = false;
  std::map<std::string, std::string> options;
  std::string secret_name;       // secretRef.name
  std::string secret_namespace;  // secretRef.namespace (PV only)
};

struct PodVolume {
  std::string name;
  std::optional<FlexSource> flex;  // inline flexVolume
  std::string claim_name;          // persistentVolumeClaim.claimName
  bool claim_read_only = false;
};

struct Pod {
  std::string name;
  std::string ns = "default";
  std::string uid;
  std::string node;
  std::string service_account = "default";
  std::optional<std::int64_t> fs_group;
  std::vector<PodVolume> volumes;
};

struct PersistentVolume {
  std::string name;
  FlexSource flex;
  std::vector<std::string> access_modes;
};

struct PersistentVolumeClaim {
  std::string name;
  std::string ns = "default";
  std::string volume_name;
};

struct Secret {
  std::string name;
  std::string ns = "default";
  std::string type;
  std::map<std::string, std::string> data;  // raw bytes
};

struct NodeStatus {
  bool controller_managed_attach = true;                // the node annotation
  std::map<std::string, std::string> volumes_attached;  // unique name -> devicePath
  std::set<std::string> volumes_in_use;
};

// A pod's volume resolved to what the flex plugin sees.
struct ResolvedVolume {
  VolumeSpec spec;
  FlexSource source;  // for the secret reference
};

class ClusterState {
 public:
  std::map<std::string, Pod> pods;  // by "ns/name"
  std::map<std::string, PersistentVolume> pvs;
  std::map<std::string, PersistentVolumeClaim> pvcs;  // by "ns/name"
  std::map<std::string, Secret> secrets;              // by "ns/name"
  std::map<std::string, NodeStatus> node_status;

  static std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }
  // Throws std::runtime_error naming the pod, volume and what is missing.
  ResolvedVolume Resolve(const Pod& pod, const PodVolume& volume) const;
  std::vector<const Pod*> PodsOn(const std::string& node) const;
};

}  // namespace flexkit::sim
