#pragma once
// kubelet's volume manager for FlexVolume on one node (reference §5-§7):
// desired state from the pods bound to the node, actual state of what is
// attached and mounted, and one reconcile pass per Sync(): tear down what is
// no longer wanted (unmount, unmountdevice, kubelet-managed detach), then set
// up what is wanted (getvolumename, attach when kubelet-managed, wait for the
// controller's attach, waitforattach, mountdevice, mount), with the
// Not-supported fallbacks done for real. Restart() is a kubelet restart:
// new plugin objects, actual state reconstructed from the pod directories.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "simulator/cluster_state.h"
#include "simulator/kubelet_paths.h"
#include "simulator/prober.h"

namespace flexkit::sim {

class Kubelet {
 public:
  Kubelet(Node& node, ClusterState& cluster, DriverInvoker& invoker, const VersionProfile& profile,
          Transcript& transcript);

  // One reconcile pass. Errors of one volume do not stop the others; they
  // are returned (and recorded in the transcript).
  std::vector<std::string> Sync();

  // A kubelet restart on a running node: Not-supported caches dropped,
  // mounted volumes reconstructed from <root>/pods/*/volumes.
  void Restart();

  // What the kubelet believes: pod UIDs with the volume mounted.
  std::set<std::string> PodsWithVolume(const std::string& volume_name) const;
  bool DeviceMounted(const std::string& volume_name) const;
  // The pod's volume dir (where the pod sees the volume).
  std::string PodVolumeDir(const Pod& pod, const PodVolume& volume) const;

  Prober& prober() { return *prober_; }

 private:
  struct VolumeState {
    std::string unique_name;
    VolumeSpec spec;
    bool attachable = false;
    std::string device;  // from waitforattach
    bool device_mounted = false;
    bool attached_by_kubelet = false;
    std::set<std::string> pods;  // pod UIDs mounted
  };

  std::string UniqueName(const VolumeSpec& spec, bool attachable, const std::string& pod_uid) const;
  CallResult Call(FlexPlugin& plugin, const Args& args, const Redactor& redactor = Redactor());
  void GetVolumeName(FlexPlugin& plugin, const VolumeSpec& spec);
  // The steps of Kubernetes' operation generator, in order: SetUp runs
  // AttachedDevicePath, WaitForAttach and MountDevice for an attachable
  // volume whose device is not mounted yet, then MountPod.
  void SetUp(const Pod& pod, const PodVolume& volume);
  std::string AttachedDevicePath(FlexPlugin& plugin, VolumeState& state);
  void WaitForAttach(FlexPlugin& plugin, VolumeState& state, const std::string& device_path);
  void MountDevice(FlexPlugin& plugin, VolumeState& state);
  MountExtras PodExtras(const Pod& pod, const ResolvedVolume& resolved) const;
  void MountPod(FlexPlugin& plugin, VolumeState& state, const Pod& pod,
                const ResolvedVolume& resolved);
  void TearDownPod(VolumeState& state, const std::string& pod_uid);
  void TearDownDevice(VolumeState& state);
  Redactor SecretRedactor(const std::map<std::string, std::string>& secret) const;
  void Reconstruct();

  Node& node_;
  ClusterState& cluster_;
  DriverInvoker& invoker_;
  const VersionProfile& profile_;
  Transcript& transcript_;
  std::unique_ptr<Prober> prober_;
  std::map<std::string, VolumeState> volumes_;  // by volume (spec) name
};

}  // namespace flexkit::sim
