#include "simulator/kubelet.h"

#include <stdexcept>

#include "simulator/plugin_name.h"

namespace flexkit::sim {
namespace {

constexpr const char* kKubeletComponent = "kubelet";

std::runtime_error OperationError(const std::string& what, const std::string& volume,
                                  const std::string& why) {
  return std::runtime_error(what + " of volume " + volume + " failed: " + why);
}

}  // namespace

Kubelet::Kubelet(Node& node, ClusterState& cluster, DriverInvoker& invoker,
                 const VersionProfile& profile, Transcript& transcript)
    : node_(node),
      cluster_(cluster),
      invoker_(invoker),
      profile_(profile),
      transcript_(transcript) {
  prober_ =
      std::make_unique<Prober>(node_, node_.plugin_dir(), kKubeletComponent, invoker_, profile_);
  caller_ = std::make_unique<ProberCaller>(*prober_);
  ops_ = std::make_unique<VolumeOperations>(profile_, *caller_);
}

std::string Kubelet::UniqueName(const VolumeSpec& spec, bool attachable,
                                const std::string& pod_uid) const {
  std::string plugin_name = profile_.plugin_name_prefix + spec.driver;
  if (attachable) return plugin_name + "/" + spec.name;
  return plugin_name + "/" + pod_uid + "-" + spec.name;
}

std::string Kubelet::PodVolumeDir(const Pod& pod, const PodVolume& volume) const {
  ResolvedVolume r = cluster_.Resolve(pod, volume);
  return KubeletPaths(node_.kubelet_root(), r.spec.driver).PodVolumeDir(pod.uid, r.spec.name);
}

void Kubelet::NoteShortSecrets(const std::map<std::string, std::string>& secret) const {
  Redactor r;
  for (const auto& [k, v] : secret) r.AddSecret(k, v);
  for (const auto& note : r.ShortSecretNotes()) {
    transcript_.AddEvent("secret too short to redact safely",
                         {{"node", node_.name()}, {"note", note}});
  }
}

std::set<std::string> Kubelet::PodsWithVolume(const std::string& volume_name) const {
  auto it = volumes_.find(volume_name);
  return it == volumes_.end() ? std::set<std::string>{} : it->second.pods;
}

bool Kubelet::DeviceMounted(const std::string& volume_name) const {
  auto it = volumes_.find(volume_name);
  return it != volumes_.end() && it->second.device_mounted;
}

std::vector<std::string> Kubelet::Sync() {
  std::vector<std::string> errors;
  auto record = [&](const std::exception& e) {
    errors.push_back(e.what());
    transcript_.AddEvent("kubelet error", {{"node", node_.name()}, {"error", e.what()}});
  };
  if (!node_.running()) return errors;
  NodeStatus& status = cluster_.node_status[node_.name()];

  // Desired: (volume name, pod uid) for every pod bound here.
  std::map<std::string, std::set<std::string>> desired;
  std::vector<std::pair<const Pod*, const PodVolume*>> wanted;
  for (const Pod* pod : cluster_.PodsOn(node_.name())) {
    for (const auto& v : pod->volumes) {
      try {
        desired[cluster_.Resolve(*pod, v).spec.name].insert(pod->uid);
        wanted.emplace_back(pod, &v);
      } catch (const std::exception& e) {
        record(e);
      }
    }
  }

  // Tear down pods first, then devices no pod uses any more.
  CleanOrphans(desired, record);
  for (auto& [name, state] : volumes_) {
    std::set<std::string> pods = state.pods;
    for (const auto& uid : pods) {
      if (desired[name].count(uid) != 0) continue;
      try {
        TearDownPod(state, uid);
      } catch (const std::exception& e) {
        record(e);
      }
    }
  }
  for (auto it = volumes_.begin(); it != volumes_.end();) {
    VolumeState& state = it->second;
    if (state.pods.empty() && desired[it->first].empty()) {
      try {
        TearDownDevice(state);
        status.volumes_in_use.erase(state.unique_name);
        it = volumes_.erase(it);
        continue;
      } catch (const std::exception& e) {
        record(e);
      }
    }
    ++it;
  }

  for (const auto& [pod, volume] : wanted) {
    try {
      SetUp(*pod, *volume);
    } catch (const std::exception& e) {
      record(e);
    }
  }
  UpdateReconstructedFromNodeStatus();
  return errors;
}

void Kubelet::SetUp(const Pod& pod, const PodVolume& volume) {
  ResolvedVolume resolved = cluster_.Resolve(pod, volume);
  const VolumeSpec& spec = resolved.spec;
  auto plugin = prober_->Find(spec.driver);
  if (!plugin) {
    throw OperationError("MountVolume", spec.name, "no volume plugin matched " + spec.driver);
  }
  const bool attachable = plugin->capabilities.attach;
  VolumeState& state = volumes_[spec.name];
  const bool uncertain = state.uncertain_pods.count(pod.uid) != 0;
  if (state.pods.count(pod.uid) != 0 && !uncertain) return;  // mounted already
  state.spec = spec;                                         // the pod's own spec, options and all
  state.attachable = attachable;
  state.unique_name = UniqueName(spec, attachable, pod.uid);
  if (attachable) {
    // The desired-state populator names the volume (GetVolumeName) and
    // reports it in use before anything is mounted.
    Step name = ops_->GetVolumeName(node_, Component::kKubelet, spec);
    if (!name.ok()) throw OperationError("GetVolumeName", spec.name, name.error);
    cluster_.node_status[node_.name()].volumes_in_use.insert(state.unique_name);
    // A reconstructed volume is in the actual state already: no attach,
    // no wait for node status, its device path whatever kubelet holds.
    if (!state.reconstructed) state.device_path = AttachedDevicePath(state);
  }
  const MountExtras extras = PodExtras(pod, resolved);
  NoteShortSecrets(extras.secret);
  MountResult m = ops_->MountVolume(node_, spec, extras, attachable, state.device_path,
                                    state.device_mounted, plugin->capabilities.fs_group);
  if (attachable && m.wait_for_attach.ok()) state.device = m.device;
  if (attachable && m.wait_for_attach.ok() && m.mount_device.ok()) state.device_mounted = true;
  if (const Step* failed = m.failed()) {
    const char* what = failed == &m.wait_for_attach ? "WaitForAttach"
                       : failed == &m.mount_device  ? "MountDevice"
                                                    : "MountVolume.SetUp";
    throw OperationError(what, spec.name, failed->error);
  }
  state.pods.insert(pod.uid);
  state.uncertain_pods.erase(pod.uid);
}

// The device path of an attached volume: attach it when kubelet manages
// attachment, otherwise verify the controller attached it
// (VerifyControllerAttachedVolume).
std::string Kubelet::AttachedDevicePath(VolumeState& state) {
  NodeStatus& status = cluster_.node_status[node_.name()];
  const VolumeSpec& spec = state.spec;
  if (!status.controller_managed_attach) {
    if (!state.attached_by_kubelet) {
      Step a = ops_->Attach(node_, Component::kKubelet, spec, node_.name());
      if (!a.ok()) throw OperationError("AttachVolume", spec.name, a.error);
      status.volumes_attached[state.unique_name] = a.device;
      state.attached_by_kubelet = true;
    }
    return status.volumes_attached[state.unique_name];
  }
  auto attached = status.volumes_attached.find(state.unique_name);
  if (attached == status.volumes_attached.end()) {
    throw OperationError(
        "VerifyControllerAttachedVolume", spec.name,
        "volume " + state.unique_name + " is not yet attached to node " + node_.name());
  }
  return attached->second;
}

// The pod keys of the mount options, with the secret the volume names
// (or why it cannot be had, which fails SetUp).
MountExtras Kubelet::PodExtras(const Pod& pod, const ResolvedVolume& resolved) const {
  const VolumeSpec& spec = resolved.spec;
  MountExtras extras;
  extras.pod_name = pod.name;
  extras.pod_namespace = pod.ns;
  extras.pod_uid = pod.uid;
  extras.service_account = pod.service_account;
  extras.fs_group = pod.fs_group;
  const FlexSource& source = resolved.source;
  if (source.secret_name.empty()) return extras;
  std::string ns =
      spec.inline_volume || source.secret_namespace.empty() ? pod.ns : source.secret_namespace;
  auto secret = cluster_.secrets.find(ClusterState::Key(ns, source.secret_name));
  if (secret == cluster_.secrets.end() ||
      (profile_.honours_capabilities && secret->second.type != spec.driver)) {
    extras.secret_error =
        "Cannot get secret of type " + spec.driver + " (" + ns + "/" + source.secret_name + ")";
    return extras;
  }
  extras.secret = secret->second.data;
  return extras;
}

void Kubelet::TearDownPod(VolumeState& state, const std::string& pod_uid) {
  if (!prober_->Find(state.spec.driver))
    throw OperationError("UnmountVolume", state.spec.name, "no volume plugin matched");
  Step t = ops_->TearDown(node_, state.spec, pod_uid);
  if (!t.ok()) throw OperationError("UnmountVolume.TearDown", state.spec.name, t.error);
  state.pods.erase(pod_uid);
  state.uncertain_pods.erase(pod_uid);
}

void Kubelet::TearDownDevice(VolumeState& state) {
  if (!state.attachable) return;
  if (!prober_->Find(state.spec.driver))
    throw OperationError("UnmountDevice", state.spec.name, "no volume plugin matched");
  Step u = ops_->UnmountDevice(node_, state.spec);
  if (!u.ok()) {
    throw OperationError(u.failed_verb == "getvolumename" ? "GetVolumeName" : "UnmountDevice",
                         state.spec.name, u.error);
  }
  state.device_mounted = false;
  NodeStatus& status = cluster_.node_status[node_.name()];
  // A reconstructed volume's attachability is False once node status is
  // read (it lists none of kubelet's own attachments): never detached here.
  if (!status.controller_managed_attach && state.reconstructed) {
    left_attached_.insert(state.spec.name);
    transcript_.AddEvent("left attached",
                         {{"node", node_.name()},
                          {"volume", state.spec.name},
                          {"why",
                           "kubelet never detaches a volume it reconstructed when it manages "
                           "attach (reconstruct.go updateReconstructedFromNodeStatus)"}});
  }
  if (!status.controller_managed_attach && !state.reconstructed) {
    // kubelet-managed: detach right away, no volumesInUse check.
    Step d = ops_->Detach(node_, Component::kKubelet, state.spec, node_.name());
    if (!d.ok()) throw OperationError("DetachVolume", state.spec.name, d.error);
    status.volumes_attached.erase(state.unique_name);
  }
}

std::set<std::string> Kubelet::TakeVolumesLeftAttached() {
  std::set<std::string> taken;
  taken.swap(left_attached_);
  return taken;
}

void Kubelet::Restart() {
  transcript_.AddEvent("kubelet restart", {{"node", node_.name()}});
  prober_ =
      std::make_unique<Prober>(node_, node_.plugin_dir(), kKubeletComponent, invoker_, profile_);
  caller_ = std::make_unique<ProberCaller>(*prober_);
  ops_ = std::make_unique<VolumeOperations>(profile_, *caller_);
  volumes_.clear();
  failed_reconstruction_.clear();
  Reconstruct();
}

void Kubelet::Reconstruct() {
  // A crashed node has nothing to read: RestartNode reconstructs once its
  // new namespace runs.
  if (!node_.running()) return;
  node_status_read_ = false;
  for (const OnDiskVolume& v : ops_->VolumesOnDisk(node_)) {
    auto plugin = prober_->Find(v.driver);
    // Plugins named with the "flexvolume-" prefix do not match the folder
    // name: reconstruction fails and the volume is orphaned (§12.6).
    if (!plugin || !profile_.plugin_name_prefix.empty()) {
      transcript_.AddEvent(
          "reconstruction failed",
          {{"node", node_.name()},
           {"dir", v.pod_dir},
           {"error", "no volume plugin matched " + profile_.plugin_name_prefix + v.driver}});
      continue;
    }
    const bool attachable = plugin->capabilities.attach;
    Step rec = ops_->ReconstructVolume(node_, v, attachable);
    if (!rec.ok()) {
      transcript_.AddEvent("reconstruction failed",
                           {{"node", node_.name()}, {"dir", v.pod_dir}, {"error", rec.error}});
      failed_reconstruction_.push_back(v);
      continue;
    }
    VolumeState& state = volumes_[v.volume_name];
    state.spec = VolumeOperations::ReconstructedSpec(v);
    state.attachable = attachable;
    state.reconstructed = true;
    state.unique_name = UniqueName(state.spec, attachable, v.pod_uid);
    state.pods.insert(v.pod_uid);
    state.uncertain_pods.insert(v.pod_uid);
    transcript_.AddEvent("reconstructed",
                         {{"node", node_.name()}, {"pod", v.pod_uid}, {"volume", v.volume_name}});
  }
}

void Kubelet::CleanOrphans(const std::map<std::string, std::set<std::string>>& desired,
                           const std::function<void(const std::exception&)>& record) {
  for (auto it = failed_reconstruction_.begin(); it != failed_reconstruction_.end();) {
    auto wanted = desired.find(it->volume_name);
    if (wanted != desired.end() && wanted->second.count(it->pod_uid) != 0) {
      ++it;  // the pod is still here: its MountVolume runs as for a new pod
      continue;
    }
    const auto t = ops_->TearDownOrphan(node_, *it, false, false);
    if (!t.ok()) {
      record(OperationError("UnmountVolume.TearDown", it->volume_name, t.tear_down.error));
      ++it;
      continue;
    }
    it = failed_reconstruction_.erase(it);
  }
}

void Kubelet::UpdateReconstructedFromNodeStatus() {
  if (node_status_read_) return;
  node_status_read_ = true;
  const NodeStatus& status = cluster_.node_status[node_.name()];
  if (!status.controller_managed_attach) return;  // kubelet's attachments are not listed
  for (auto& [name, state] : volumes_) {
    if (!state.reconstructed) continue;
    auto listed = status.volumes_attached.find(state.unique_name);
    if (listed != status.volumes_attached.end()) state.device_path = listed->second;
  }
}

}  // namespace flexkit::sim
