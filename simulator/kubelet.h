#pragma once
// kubelet's volume manager for FlexVolume on one node (reference §5-§7):
// desired state from the pods bound to the node, actual state of what is
// attached and mounted, and one reconcile pass per Sync(): tear down what is
// no longer wanted (UnmountVolume, UnmountDevice, kubelet-managed detach),
// then set up what is wanted (the populator's getvolumename, attach when
// kubelet-managed, wait for the controller's attach, MountVolume). The
// operations themselves are VolumeOperations'. Restart() is a kubelet
// restart: new plugin objects, actual state reconstructed from the pod
// directories.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "simulator/cluster_state.h"
#include "simulator/kubelet_paths.h"
#include "simulator/prober.h"
#include "simulator/volume_operations.h"

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

  // Volumes this kubelet tore down and left attached: a volume it found
  // on disk at a restart is never detached with kubelet-managed attach
  // (its attachability is False once node status is read), so the
  // attachment stays until someone else detaches it. Taking them forgets them.
  std::set<std::string> TakeVolumesLeftAttached();

 private:
  struct VolumeState {
    std::string unique_name;
    VolumeSpec spec;
    bool attachable = false;
    std::string device_path;  // the actual state's devicePath: attach's, or node status'
    std::string device;       // from waitforattach
    bool device_mounted = false;
    bool attached_by_kubelet = false;
    // Found on disk at a restart: kubelet never attaches or detaches it.
    bool reconstructed = false;
    std::set<std::string> pods;            // pod UIDs mounted
    std::set<std::string> uncertain_pods;  // reconstructed mounts: MountVolume runs again
  };

  std::string UniqueName(const VolumeSpec& spec, bool attachable, const std::string& pod_uid) const;
  // MountVolume for one pod: the populator's GetVolumeName and
  // volumesInUse, the device path (kubelet-managed attach, or the
  // controller's node status), then the operation.
  void SetUp(const Pod& pod, const PodVolume& volume);
  std::string AttachedDevicePath(VolumeState& state);
  MountExtras PodExtras(const Pod& pod, const ResolvedVolume& resolved) const;
  void TearDownPod(VolumeState& state, const std::string& pod_uid);
  void TearDownDevice(VolumeState& state);
  void NoteShortSecrets(const std::map<std::string, std::string>& secret) const;
  // reconstruct.go reconstructVolumes: the volumes on disk, each mounted
  // "uncertain" with device path "".
  void Reconstruct();
  // Pods gone while kubelet was down, whose volume failed reconstruction:
  // cleanOrphanVolumes unmounts their pod dirs.
  void CleanOrphans(const std::map<std::string, std::set<std::string>>& desired,
                    const std::function<void(const std::exception&)>& record);
  // reconstruct.go updateReconstructedFromNodeStatus, after the first pass:
  // node status' devicePath for a reconstructed volume (controller-managed
  // attach only lists them there).
  void UpdateReconstructedFromNodeStatus();

  Node& node_;
  ClusterState& cluster_;
  DriverInvoker& invoker_;
  const VersionProfile& profile_;
  Transcript& transcript_;
  std::unique_ptr<Prober> prober_;
  std::unique_ptr<ProberCaller> caller_;
  std::unique_ptr<VolumeOperations> ops_;
  std::map<std::string, VolumeState> volumes_;  // by volume (spec) name
  std::vector<OnDiskVolume> failed_reconstruction_;
  std::set<std::string> left_attached_;
  bool node_status_read_ = true;  // false from a restart until the first pass ends
};

}  // namespace flexkit::sim
