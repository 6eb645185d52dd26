#include "simulator/cluster_state.h"

#include <algorithm>
#include <stdexcept>

namespace flexkit::sim {

ResolvedVolume ClusterState::Resolve(const Pod& pod, const PodVolume& volume) const {
  ResolvedVolume r;
  if (volume.flex) {
    r.source = *volume.flex;
    r.spec.name = volume.name;
    r.spec.read_only = volume.flex->read_only;
    r.spec.inline_volume = true;
  } else {
    auto claim = pvcs.find(Key(pod.ns, volume.claim_name));
    if (claim == pvcs.end()) {
      throw std::runtime_error("pod " + Key(pod.ns, pod.name) + " volume " + volume.name +
                               ": claim " + volume.claim_name + " not found");
    }
    auto pv = pvs.find(claim->second.volume_name);
    if (pv == pvs.end()) {
      throw std::runtime_error("pod " + Key(pod.ns, pod.name) + " volume " + volume.name +
                               ": PersistentVolume " + claim->second.volume_name + " not found");
    }
    r.source = pv->second.flex;
    r.spec.name = pv->second.name;
    r.spec.read_only = volume.claim_read_only;  // not the PV's flexVolume.readOnly (§4)
    r.spec.inline_volume = false;
    const auto& modes = pv->second.access_modes;
    r.spec.read_write_once_only =
        !modes.empty() && std::all_of(modes.begin(), modes.end(),
                                      [](const std::string& m) { return m == "ReadWriteOnce"; });
  }
  r.spec.driver = r.source.driver;
  r.spec.fs_type = r.source.fs_type;
  r.spec.options = r.source.options;
  return r;
}

std::vector<const Pod*> ClusterState::PodsOn(const std::string& node) const {
  std::vector<const Pod*> out;
  for (const auto& [key, pod] : pods) {
    if (pod.node == node) out.push_back(&pod);
  }
  return out;
}

}  // namespace flexkit::sim
