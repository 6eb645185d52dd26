#include "simulator/kubelet.h"

#include <sys/mount.h>

#include <stdexcept>

#include "simulator/options_builder.h"
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

Redactor Kubelet::SecretRedactor(const std::map<std::string, std::string>& secret) const {
  Redactor r;
  for (const auto& [k, v] : secret) r.AddSecret(k, v);
  for (const auto& note : r.ShortSecretNotes()) {
    transcript_.AddEvent("secret too short to redact safely",
                         {{"node", node_.name()}, {"note", note}});
  }
  return r;
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
  return errors;
}

CallResult Kubelet::Call(FlexPlugin& plugin, const Args& args, const Redactor& redactor) {
  return prober_->Call(plugin, args, redactor);
}

// GetVolumeName, which Kubernetes runs for the unique name and again in
// getDeviceMountPath: Not supported is no error.
void Kubelet::GetVolumeName(FlexPlugin& plugin, const VolumeSpec& spec) {
  CallResult r =
      Call(plugin, ArgvBuilder(profile_).GetVolumeName(OptionsJson(profile_, spec, nullptr)));
  if (!r.ok() && !r.not_supported())
    throw OperationError("GetVolumeName", spec.name, r.verdict.error);
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
  if (state.pods.count(pod.uid) != 0) return;  // mounted already
  state.spec = spec;
  state.attachable = attachable;
  state.unique_name = UniqueName(spec, attachable, pod.uid);
  if (attachable && !state.device_mounted) {
    GetVolumeName(*plugin, spec);
    cluster_.node_status[node_.name()].volumes_in_use.insert(state.unique_name);  // before mounting
    WaitForAttach(*plugin, state, AttachedDevicePath(*plugin, state));
    MountDevice(*plugin, state);
  }
  MountPod(*plugin, state, pod, resolved);
}

// The device path of an attached volume: attach it when kubelet manages
// attachment, otherwise verify the controller attached it
// (VerifyControllerAttachedVolume).
std::string Kubelet::AttachedDevicePath(FlexPlugin& plugin, VolumeState& state) {
  NodeStatus& status = cluster_.node_status[node_.name()];
  const VolumeSpec& spec = state.spec;
  if (!status.controller_managed_attach) {
    if (!state.attached_by_kubelet) {
      CallResult r = Call(
          plugin, ArgvBuilder(profile_).Attach(OptionsJson(profile_, spec, nullptr), node_.name()));
      if (!r.ok() && !r.not_supported())
        throw OperationError("AttachVolume", spec.name, r.verdict.error);
      status.volumes_attached[state.unique_name] = r.ok() ? r.verdict.status->device : "";
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

void Kubelet::WaitForAttach(FlexPlugin& plugin, VolumeState& state,
                            const std::string& device_path) {
  CallResult w = Call(plugin, ArgvBuilder(profile_).WaitForAttach(
                                  device_path, OptionsJson(profile_, state.spec, nullptr)));
  if (!w.ok() && !w.not_supported())
    throw OperationError("WaitForAttach", state.spec.name, w.verdict.error);
  state.device = w.ok() ? w.verdict.status->device : device_path;
}

// MountDevice at the global path, only once; Not supported: kubelet
// formats and mounts the device itself.
void Kubelet::MountDevice(FlexPlugin& plugin, VolumeState& state) {
  const VolumeSpec& spec = state.spec;
  NodeFilesystem& fs = node_.filesystem();
  GetVolumeName(plugin, spec);  // GetDeviceMountPath (plugin.go getDeviceMountPath)
  const std::string global =
      KubeletPaths(node_.kubelet_root(), spec.driver).DeviceMountPath(spec.name);
  if (!(fs.PathExists(global) && fs.IsMountPoint(global))) {  // "mount only once"
    fs.MakeDirs(global, 0750);
    CallResult md = Call(plugin, ArgvBuilder(profile_).MountDevice(
                                     global, state.device, OptionsJson(profile_, spec, nullptr)));
    if (md.not_supported()) {
      if (!state.device.empty())
        fs.FormatAndMount(state.device, global, spec.fs_type, spec.read_only);
    } else if (!md.ok()) {
      throw OperationError("MountDevice", spec.name, md.verdict.error);
    }
  }
  state.device_mounted = true;
}

// The pod keys of the mount options, with the secret the volume names.
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
    throw OperationError(
        "MountVolume.SetUp", spec.name,
        "Cannot get secret of type " + spec.driver + " (" + ns + "/" + source.secret_name + ")");
  }
  extras.secret = secret->second.data;
  return extras;
}

// SetUp: prepare the pod dir (skip if already a mount point), mount, or
// bind the global path when the driver does not support mount.
void Kubelet::MountPod(FlexPlugin& plugin, VolumeState& state, const Pod& pod,
                       const ResolvedVolume& resolved) {
  const VolumeSpec& spec = resolved.spec;
  const MountExtras extras = PodExtras(pod, resolved);
  const Redactor redactor = SecretRedactor(extras.secret);
  KubeletPaths paths(node_.kubelet_root(), spec.driver);
  NodeFilesystem& fs = node_.filesystem();
  const std::string dir = paths.PodVolumeDir(pod.uid, spec.name);
  if (fs.PathExists(dir) && fs.IsMountPoint(dir)) {
    state.pods.insert(pod.uid);
    return;
  }
  fs.MakeDirs(dir, 0750);
  CallResult r = Call(
      plugin, ArgvBuilder(profile_).Mount(dir, OptionsJson(profile_, spec, &extras), state.device),
      redactor);
  try {
    if (r.not_supported()) {
      // mounter-defaults.go SetUpAt: the bind source comes from
      // getDeviceMountPath, which runs getvolumename (options without pod
      // keys) first; its failure fails the mount.
      GetVolumeName(plugin, spec);
      // Bind the global path, then remount read-only if asked.
      const std::string global = paths.DeviceMountPath(spec.name);
      fs.Mount(global, dir, "", MS_BIND, "");
      if (spec.read_only) fs.Mount(global, dir, "", MS_BIND | MS_REMOUNT | MS_RDONLY, "");
    } else if (!r.ok()) {
      throw OperationError("MountVolume.SetUp", spec.name, redactor.Apply(r.verdict.error));
    }
  } catch (...) {
    if (fs.PathExists(dir) && !fs.IsMountPoint(dir)) {
      try {
        fs.RemoveDir(dir);  // k/k#49539: no directory left behind
      } catch (const std::exception&) {
      }
    }
    throw;
  }
  if (!spec.read_only && plugin.capabilities.fs_group && pod.fs_group) {
    fs.SetVolumeOwnership(dir, static_cast<long>(*pod.fs_group));
  }
  state.pods.insert(pod.uid);
}

void Kubelet::TearDownPod(VolumeState& state, const std::string& pod_uid) {
  NodeFilesystem& m = node_.filesystem();
  KubeletPaths paths(node_.kubelet_root(), state.spec.driver);
  const std::string dir = paths.PodVolumeDir(pod_uid, state.spec.name);
  if (!m.PathExists(dir)) {  // "Unmount skipped because path does not exist"
    state.pods.erase(pod_uid);
    return;
  }
  auto plugin = prober_->Find(state.spec.driver);
  if (!plugin) throw OperationError("UnmountVolume", state.spec.name, "no volume plugin matched");
  CallResult r = prober_->Call(*plugin, ArgvBuilder(profile_).Unmount(dir), Redactor());
  if (r.not_supported()) {
    if (m.IsMountPoint(dir)) m.Unmount(dir);
  } else if (!r.ok()) {
    throw OperationError("UnmountVolume.TearDown", state.spec.name, r.verdict.error);
  }
  if (m.PathExists(dir)) m.RemoveDir(dir);
  state.pods.erase(pod_uid);
}

void Kubelet::TearDownDevice(VolumeState& state) {
  if (!state.attachable) return;
  NodeFilesystem& m = node_.filesystem();
  auto plugin = prober_->Find(state.spec.driver);
  if (!plugin) throw OperationError("UnmountDevice", state.spec.name, "no volume plugin matched");
  ArgvBuilder argv(profile_);
  const std::string json = OptionsJson(profile_, state.spec, nullptr);
  // operation_generator GenerateUnmountDeviceFunc: GetDeviceMountPath first.
  CallResult g = prober_->Call(*plugin, argv.GetVolumeName(json), Redactor());
  if (!g.ok() && !g.not_supported())
    throw OperationError("GetVolumeName", state.spec.name, g.verdict.error);
  const std::string global =
      KubeletPaths(node_.kubelet_root(), state.spec.driver).DeviceMountPath(state.spec.name);
  // detacher.go UnmountDevice: skipped when missing or not a mount point
  // ("already unmounted"), then the path is removed.
  if (m.PathExists(global) && m.IsMountPoint(global)) {
    CallResult r = prober_->Call(*plugin, argv.UnmountDevice(global), Redactor());
    if (r.not_supported()) {
      m.Unmount(global);
    } else if (!r.ok()) {
      throw OperationError("UnmountDevice", state.spec.name, r.verdict.error);
    }
  }
  if (m.PathExists(global)) m.RemoveDir(global);
  state.device_mounted = false;
  NodeStatus& status = cluster_.node_status[node_.name()];
  if (!status.controller_managed_attach) {
    // kubelet-managed: detach right away, no volumesInUse check.
    CallResult d = prober_->Call(*plugin, argv.Detach(state.spec.name, node_.name()), Redactor());
    if (!d.ok() && !d.not_supported())
      throw OperationError("DetachVolume", state.spec.name, d.verdict.error);
    status.volumes_attached.erase(state.unique_name);
  }
}

void Kubelet::Restart() {
  transcript_.AddEvent("kubelet restart", {{"node", node_.name()}});
  prober_ =
      std::make_unique<Prober>(node_, node_.plugin_dir(), kKubeletComponent, invoker_, profile_);
  volumes_.clear();
  Reconstruct();
}

void Kubelet::Reconstruct() {
  // A crashed node has nothing to read: RestartNode reconstructs once its
  // new namespace runs.
  if (!node_.running()) return;
  NodeFilesystem& fs = node_.filesystem();
  const std::string pods_dir = node_.kubelet_root() + "/pods";
  std::set<std::string> desired;  // uids of the pods bound here
  for (const Pod* pod : cluster_.PodsOn(node_.name())) desired.insert(pod->uid);
  for (const auto& uid : fs.ListDir(pods_dir)) {
    const std::string volumes_dir = pods_dir + "/" + uid + "/volumes";
    for (const auto& escaped : fs.ListDir(volumes_dir)) {
      const std::string plugin_dir = volumes_dir + "/" + escaped;
      const std::string driver = UnescapeDriverName(escaped);
      auto plugin = prober_->Find(driver);
      // Plugins named with the "flexvolume-" prefix do not match the folder
      // name: reconstruction fails and the volume is orphaned (§12.6).
      if (!plugin || !profile_.plugin_name_prefix.empty()) {
        transcript_.AddEvent(
            "reconstruction failed",
            {{"node", node_.name()},
             {"dir", plugin_dir},
             {"error", "no volume plugin matched " + profile_.plugin_name_prefix + driver}});
        continue;
      }
      for (const auto& volume_name : fs.ListDir(plugin_dir)) {
        VolumeSpec spec;
        spec.name = volume_name;
        spec.driver = driver;
        // A pod still bound here whose mount vanished (the node restarted)
        // is set up again by the reconciler, not taken as mounted.
        if (desired.count(uid) != 0 && !fs.IsMountPoint(plugin_dir + "/" + volume_name)) continue;
        VolumeState& state = volumes_[spec.name];
        state.spec = spec;
        state.attachable = plugin->capabilities.attach;
        state.unique_name = UniqueName(spec, state.attachable, uid);
        state.pods.insert(uid);
        const std::string global =
            KubeletPaths(node_.kubelet_root(), driver).DeviceMountPath(spec.name);
        state.device_mounted = state.attachable && fs.PathExists(global) && fs.IsMountPoint(global);
        transcript_.AddEvent("reconstructed",
                             {{"node", node_.name()}, {"pod", uid}, {"volume", spec.name}});
      }
    }
  }
}

}  // namespace flexkit::sim
