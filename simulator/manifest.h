#pragma once
// Kubernetes YAML (one or more documents) into the cluster's objects: Pod,
// PersistentVolume, PersistentVolumeClaim, Secret (data base64 or
// stringData), Node (annotation volumes.kubernetes.io/
// controller-managed-attach-detach). Other kinds are refused by name.
#include <string>
#include <vector>

#include "simulator/cluster_state.h"

namespace flexkit::sim {

struct NodeObject {
  std::string name;
  bool controller_managed_attach = true;
};

struct Manifest {
  std::vector<Pod> pods;
  std::vector<PersistentVolume> pvs;
  std::vector<PersistentVolumeClaim> pvcs;
  std::vector<Secret> secrets;
  std::vector<NodeObject> nodes;
};

// Throws std::runtime_error naming the document and field that is wrong.
Manifest ParseManifest(const std::string& yaml_text);
std::string Base64Decode(const std::string& text);  // throws on invalid input

}  // namespace flexkit::sim
