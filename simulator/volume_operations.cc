#include "simulator/volume_operations.h"

#include <sys/mount.h>

#include <cerrno>
#include <thread>

#include "simulator/options_builder.h"
#include "simulator/plugin_name.h"

namespace flexkit::sim {

const char* ComponentName(Component component) {
  return component == Component::kController ? "controller" : "kubelet";
}

const char* ActionName(KubeletAction::Kind kind) {
  switch (kind) {
    case KubeletAction::Kind::kMakeDirs:
      return "mkdir";
    case KubeletAction::Kind::kSkipCall:
      return "skip";
    case KubeletAction::Kind::kBindMount:
      return "bind mount";
    case KubeletAction::Kind::kRemountReadOnly:
      return "remount read-only";
    case KubeletAction::Kind::kFormatAndMount:
      return "format and mount";
    case KubeletAction::Kind::kUnmount:
      return "unmount";
    case KubeletAction::Kind::kRemoveDir:
      return "rmdir";
    case KubeletAction::Kind::kSetOwnership:
      return "set ownership";
    case KubeletAction::Kind::kResizeFs:
      return "resize filesystem";
  }
  return "?";
}

std::string CallError(const CallResult& r) {
  if (!r.harness_problem.empty()) return r.harness_problem;
  return r.verdict.error;
}

const Step* MountResult::failed() const {
  for (const Step* s : {&wait_for_attach, &mount_device, &set_up}) {
    if (!s->ok()) return s;
  }
  return nullptr;
}

std::string MountResult::error() const {
  const Step* s = failed();
  return s ? s->error : "";
}

VolumeOperations::VolumeOperations(const VersionProfile& profile, DriverCaller& caller,
                                   VolumeObserver* observer)
    : profile_(&profile), argv_(profile), caller_(caller), observer_(observer) {}

void VolumeOperations::UseProfile(const VersionProfile& profile) {
  profile_ = &profile;
  argv_ = ArgvBuilder(profile);
}

void VolumeOperations::UseKubeletRoot(const Node& node, const std::string& root) {
  kubelet_roots_[node.name()] = root;
}

KubeletPaths VolumeOperations::Paths(const Node& node, const std::string& driver) const {
  auto it = kubelet_roots_.find(node.name());
  return KubeletPaths(it == kubelet_roots_.end() ? node.kubelet_root() : it->second, driver);
}

std::string VolumeOperations::OptionsJson(const VolumeSpec& spec, const MountExtras* pod) const {
  return sim::OptionsJson(*profile_, spec, pod);
}

CallResult VolumeOperations::Run(Node& node, Component by, const std::string& driver,
                                 const Args& args, const Redactor& redactor) {
  DriverCall call{node, by, driver, args, redactor};
  CallResult r = caller_.Call(call);
  if (observer_ != nullptr) observer_->DriverCalled(call, r);
  return r;
}

CallResult VolumeOperations::CallDriver(Node& node, Component by, const std::string& driver,
                                        const Args& args, const Redactor& redactor) {
  return Run(node, by, driver, args, redactor);
}

CallResult VolumeOperations::CallInit(Node& node, Component by, const std::string& driver) {
  return Run(node, by, driver, argv_.Init(), Redactor());
}

CallResult VolumeOperations::CallGetVolumeName(Node& node, Component by, const VolumeSpec& spec) {
  return Run(node, by, spec.driver, argv_.GetVolumeName(OptionsJson(spec)), Redactor());
}

CallResult VolumeOperations::CallAttach(Node& node, Component by, const VolumeSpec& spec,
                                        const std::string& node_name) {
  return Run(node, by, spec.driver, argv_.Attach(OptionsJson(spec), node_name), Redactor());
}

CallResult VolumeOperations::CallWaitForAttach(Node& node, const VolumeSpec& spec,
                                               const std::string& device) {
  return Run(node, Component::kKubelet, spec.driver, argv_.WaitForAttach(device, OptionsJson(spec)),
             Redactor());
}

CallResult VolumeOperations::CallIsAttached(Node& node, Component by, const VolumeSpec& spec,
                                            const std::string& node_name) {
  return Run(node, by, spec.driver, argv_.IsAttached(OptionsJson(spec), node_name), Redactor());
}

CallResult VolumeOperations::CallMountDevice(Node& node, const VolumeSpec& spec,
                                             const std::string& path, const std::string& device) {
  return Run(node, Component::kKubelet, spec.driver,
             argv_.MountDevice(path, device, OptionsJson(spec)), Redactor());
}

CallResult VolumeOperations::CallMount(Node& node, const VolumeSpec& spec, const MountExtras& pod,
                                       const std::string& dir) {
  return Run(node, Component::kKubelet, spec.driver, argv_.Mount(dir, OptionsJson(spec, &pod)),
             SecretRedactor(pod));
}

CallResult VolumeOperations::CallUnmount(Node& node, const std::string& driver,
                                         const std::string& dir) {
  return Run(node, Component::kKubelet, driver, argv_.Unmount(dir), Redactor());
}

CallResult VolumeOperations::CallUnmountDevice(Node& node, const std::string& driver,
                                               const std::string& path) {
  return Run(node, Component::kKubelet, driver, argv_.UnmountDevice(path), Redactor());
}

CallResult VolumeOperations::CallDetach(Node& node, Component by, const VolumeSpec& spec,
                                        const std::string& node_name) {
  // detach <volumeName> <node>: spec.Name(), never the device.
  return Run(node, by, spec.driver, argv_.Detach(spec.name, node_name), Redactor());
}

CallResult VolumeOperations::CallExpandVolume(Node& node, Component by, const VolumeSpec& spec,
                                              const std::string& path, const std::string& new_size,
                                              const std::string& old_size) {
  return Run(node, by, spec.driver, argv_.ExpandVolume(OptionsJson(spec), path, new_size, old_size),
             Redactor());
}

CallResult VolumeOperations::CallExpandFs(Node& node, const VolumeSpec& spec,
                                          const std::string& device, const std::string& pod_dir,
                                          const std::string& new_size,
                                          const std::string& old_size) {
  return Run(node, Component::kKubelet, spec.driver,
             argv_.ExpandFs(OptionsJson(spec), device, pod_dir, new_size, old_size), Redactor());
}

void VolumeOperations::Act(Node& node, Step& step, KubeletAction action) {
  if (observer_ != nullptr) observer_->KubeletActed(node, action);
  step.actions.push_back(std::move(action));
}

bool VolumeOperations::Do(Node& node, KubeletAction action, const std::function<void()>& what,
                          Step& step) {
  try {
    what();
  } catch (const std::exception& e) {
    action.error = e.what();
    step.error = e.what();
    step.failed_verb.clear();
    step.failed_call.reset();
    Act(node, step, std::move(action));
    return false;
  }
  Act(node, step, std::move(action));
  return true;
}

void VolumeOperations::Judge(Step& step, const CallResult& r) {
  step.call = r;
  if (r.ok() || r.not_supported()) return;
  step.error = CallError(r);
  step.failed_verb = step.verb;
  step.failed_call = r;
}

bool VolumeOperations::PrepareForMount(Node& node, const std::string& dir, Step& step) {
  NodeFilesystem& fs = node.filesystem();
  // util.go prepareForMount: MkdirAll(dir, 0750), then "mount only once".
  if (!Do(
          node, {KubeletAction::Kind::kMakeDirs, dir, "", "0750", ""},
          [&] { fs.MakeDirs(dir, 0750); }, step)) {
    return false;
  }
  if (fs.IsMountPoint(dir)) {
    step.skipped = dir + " is already a mount point";
    Act(node, step, {KubeletAction::Kind::kSkipCall, dir, "", step.verb + ": " + step.skipped, ""});
    return false;
  }
  return true;
}

Step VolumeOperations::Init(Node& node, Component by, const std::string& driver) {
  Step step;
  step.verb = "init";
  Judge(step, CallInit(node, by, driver));
  return step;
}

Step VolumeOperations::GetVolumeName(Node& node, Component by, const VolumeSpec& spec) {
  Step step;
  step.verb = "getvolumename";
  Judge(step, CallGetVolumeName(node, by, spec));
  return step;
}

bool VolumeOperations::DeviceMountPath(Node& node, const VolumeSpec& spec, Step& step,
                                       std::string* path, const std::string& at) {
  // plugin.go getDeviceMountPath: GetVolumeName first; its error fails the
  // operation; the path is named by spec.Name() whatever it answered.
  Step name = GetVolumeName(node, Component::kKubelet, spec);
  if (!name.ok()) {
    step.error = "GetVolumeName failed from getDeviceMountPath: " + name.error;
    step.failed_verb = name.failed_verb;
    step.failed_call = name.failed_call;
    return false;
  }
  *path = at.empty() ? Paths(node, spec.driver).DeviceMountPath(spec.name) : at;
  return true;
}

Step VolumeOperations::Attach(Node& node, Component by, const VolumeSpec& spec,
                              const std::string& node_name) {
  Step step;
  step.verb = "attach";
  Judge(step, CallAttach(node, by, spec, node_name));
  // attacher-defaults.go Attach: Not supported attaches with device "".
  if (step.answered_success() && step.call->verdict.status) {
    step.device = step.call->verdict.status->device;
  }
  step.fallback = step.answered_not_supported();
  return step;
}

Step VolumeOperations::Detach(Node& node, Component by, const VolumeSpec& spec,
                              const std::string& node_name) {
  Step step;
  step.verb = "detach";
  // GenerateDetachVolumeFunc: the volume name comes from GetVolumeName.
  Step name = GetVolumeName(node, by, spec);
  if (!name.ok()) {
    step.error = "getvolumename: " + name.error;
    step.failed_verb = name.failed_verb;
    step.failed_call = name.failed_call;
    return step;
  }
  Judge(step, CallDetach(node, by, spec, node_name));
  step.fallback = step.answered_not_supported();
  return step;
}

Step VolumeOperations::IsAttached(Node& node, Component by, const VolumeSpec& spec,
                                  const std::string& node_name) {
  Step step;
  step.verb = "isattached";
  Judge(step, CallIsAttached(node, by, spec, node_name));
  if (step.answered_success() && step.call->verdict.status) {
    step.attached = step.call->verdict.status->attached;
  }
  // Not supported: VolumesAreAttached keeps the volume as attached.
  if (step.answered_not_supported()) step.attached = true;
  return step;
}

Step VolumeOperations::WaitForAttach(Node& node, const VolumeSpec& spec,
                                     const std::string& device_path) {
  Step step;
  step.verb = "waitforattach";
  Judge(step, CallWaitForAttach(node, spec, device_path));
  step.device = device_path;  // attacher-defaults WaitForAttach: the path it was given
  if (step.answered_success()) {
    step.device = step.call->verdict.status ? step.call->verdict.status->device : "";
  }
  step.fallback = step.answered_not_supported();
  return step;
}

Step VolumeOperations::MountDevice(Node& node, const VolumeSpec& spec, const std::string& device,
                                   const std::string& at) {
  Step step;
  step.verb = "mountdevice";
  std::string path;
  if (!DeviceMountPath(node, spec, step, &path, at)) return step;
  if (!PrepareForMount(node, path, step)) return step;
  Judge(step, CallMountDevice(node, spec, path, device));
  if (step.answered_not_supported()) {
    step.fallback = true;
    DefaultMountDevice(node, spec, device, path, step);
  }
  return step;
}

void VolumeOperations::DefaultMountDevice(Node& node, const VolumeSpec& spec,
                                          const std::string& device, const std::string& path,
                                          Step& step) {
  if (device.empty()) return;  // attach was not supported: nothing to mount
  Do(
      node, {KubeletAction::Kind::kFormatAndMount, path, device, spec.fs_type, ""},
      [&] { node.filesystem().FormatAndMount(device, path, spec.fs_type, spec.read_only); }, step);
}

void VolumeOperations::DefaultSetUp(Node& node, const VolumeSpec& spec, const std::string& source,
                                    const std::string& dir, Step& step) {
  NodeFilesystem& fs = node.filesystem();
  if (Do(
          node, {KubeletAction::Kind::kBindMount, dir, source, "", ""},
          [&] { fs.Mount(source, dir, "", MS_BIND, ""); }, step) &&
      spec.read_only) {
    Do(
        node, {KubeletAction::Kind::kRemountReadOnly, dir, source, "", ""},
        [&] { fs.Mount(source, dir, "", MS_BIND | MS_REMOUNT | MS_RDONLY, ""); }, step);
  }
}

Redactor VolumeOperations::SecretRedactor(const MountExtras& pod) const {
  Redactor r;
  for (const auto& [key, value] : pod.secret) r.AddSecret(key, value);
  return r;
}

Step VolumeOperations::SetUp(Node& node, const VolumeSpec& spec, const MountExtras& pod,
                             bool fs_group_capability, const std::string& at) {
  Step step;
  step.verb = "mount";
  NodeFilesystem& fs = node.filesystem();
  const std::string dir =
      at.empty() ? Paths(node, spec.driver).PodVolumeDir(pod.pod_uid, spec.name) : at;
  if (!PrepareForMount(node, dir, step)) return step;
  if (!pod.secret_error.empty()) {
    step.error = pod.secret_error;
  } else {
    Judge(step, CallMount(node, spec, pod, dir));
  }
  if (step.answered_not_supported()) {
    step.fallback = true;
    // mounter-defaults.go SetUpAt: getDeviceMountPath names the source.
    std::string global;
    if (DeviceMountPath(node, spec, step, &global)) DefaultSetUp(node, spec, global, dir, step);
  }
  if (!step.ok()) {
    // SetUpAt's os.Remove(dir) on any error (k/k#49539): only an empty,
    // unmounted dir goes, and the operation's error stays the first one.
    if (!fs.IsMountPoint(dir)) {
      Step removal;
      RemoveDir(node, dir, removal);
      step.actions.insert(step.actions.end(), removal.actions.begin(), removal.actions.end());
    }
    return step;
  }
  if (!spec.read_only && fs_group_capability && pod.fs_group) {
    // volume.SetVolumeOwnership; SetUpAt ignores its error (the action
    // keeps it).
    Step ownership;
    Do(
        node,
        {KubeletAction::Kind::kSetOwnership, dir, "", "fsGroup " + std::to_string(*pod.fs_group),
         ""},
        [&] { fs.SetVolumeOwnership(dir, static_cast<long>(*pod.fs_group)); }, ownership);
    step.actions.insert(step.actions.end(), ownership.actions.begin(), ownership.actions.end());
  }
  return step;
}

MountResult VolumeOperations::MountVolume(Node& node, const VolumeSpec& spec,
                                          const MountExtras& pod, bool attachable,
                                          const std::string& device_path,
                                          bool device_globally_mounted, bool fs_group_capability) {
  MountResult result;
  result.device = device_path;
  if (attachable) {
    result.wait_for_attach = WaitForAttach(node, spec, device_path);
    if (!result.wait_for_attach.ok()) return result;
    result.device = result.wait_for_attach.device;
    if (!device_globally_mounted) {
      result.mount_device = MountDevice(node, spec, result.device);
    } else {
      // The device is mounted already: GetDeviceMountPath still runs (for
      // DeviceStagePath), and its getvolumename can fail the operation.
      Step& stage = result.mount_device;
      stage.verb = "mountdevice";
      stage.skipped = "the device is mounted already";
      std::string path;
      DeviceMountPath(node, spec, stage, &path);
    }
    if (!result.mount_device.ok()) return result;
  }
  result.set_up = SetUp(node, spec, pod, fs_group_capability);
  return result;
}

void VolumeOperations::DefaultUnmount(Node& node, const std::string& dir, Step& step) {
  NodeFilesystem& fs = node.filesystem();
  if (!fs.IsMountPoint(dir)) return;
  for (int attempt = 1;; ++attempt) {
    try {
      fs.Unmount(dir);
      Act(node, step, {KubeletAction::Kind::kUnmount, dir, "", "", ""});
      return;
    } catch (const FilesystemError& e) {
      if (e.code() == EBUSY && attempt < unmount_retry_.attempts) {
        std::this_thread::sleep_for(unmount_retry_.wait);
        continue;
      }
      step.error = e.what();
      step.failed_verb.clear();
      step.failed_call.reset();
      Act(node, step, {KubeletAction::Kind::kUnmount, dir, "", "", e.what()});
      return;
    } catch (const std::exception& e) {
      step.error = e.what();
      step.failed_verb.clear();
      step.failed_call.reset();
      Act(node, step, {KubeletAction::Kind::kUnmount, dir, "", "", e.what()});
      return;
    }
  }
}

void VolumeOperations::RemoveDir(Node& node, const std::string& dir, Step& step) {
  if (!node.filesystem().PathExists(dir)) return;
  Do(
      node, {KubeletAction::Kind::kRemoveDir, dir, "", "", ""},
      [&] { node.filesystem().RemoveDir(dir); }, step);
}

Step VolumeOperations::TearDown(Node& node, const VolumeSpec& spec, const std::string& pod_uid) {
  return TearDownAt(node, spec.driver, Paths(node, spec.driver).PodVolumeDir(pod_uid, spec.name));
}

Step VolumeOperations::TearDownAt(Node& node, const std::string& driver,
                                  const std::string& pod_dir) {
  Step step;
  step.verb = "unmount";
  NodeFilesystem& fs = node.filesystem();
  if (!fs.PathExists(pod_dir)) {
    step.skipped = "Unmount skipped because path does not exist: " + pod_dir;
    Act(node, step, {KubeletAction::Kind::kSkipCall, pod_dir, "", "unmount: " + step.skipped, ""});
    return step;
  }
  Judge(step, CallUnmount(node, driver, pod_dir));
  if (step.answered_not_supported()) {
    step.fallback = true;
    DefaultUnmount(node, pod_dir, step);
  }
  if (step.ok()) RemoveDir(node, pod_dir, step);
  return step;
}

Step VolumeOperations::UnmountDevice(Node& node, const VolumeSpec& spec, const std::string& at) {
  Step step;
  step.verb = "unmountdevice";
  std::string path;
  if (!DeviceMountPath(node, spec, step, &path, at)) return step;
  NodeFilesystem& fs = node.filesystem();
  if (!fs.PathExists(path)) {
    step.skipped = "Unmount skipped because path does not exist: " + path;
    Act(node, step,
        {KubeletAction::Kind::kSkipCall, path, "", "unmountdevice: " + step.skipped, ""});
    return step;
  }
  if (!fs.IsMountPoint(path)) {
    step.skipped = "Path: " + path + " already unmounted";
    Act(node, step,
        {KubeletAction::Kind::kSkipCall, path, "", "unmountdevice: " + step.skipped, ""});
  } else {
    Judge(step, CallUnmountDevice(node, spec.driver, path));
    if (step.answered_not_supported()) {
      step.fallback = true;
      DefaultUnmount(node, path, step);
    }
  }
  if (step.ok()) RemoveDir(node, path, step);
  return step;
}

Step VolumeOperations::ExpandVolume(Node& node, Component by, const VolumeSpec& spec,
                                    const std::string& new_size, const std::string& old_size,
                                    const std::string& at) {
  Step step;
  step.verb = "expandvolume";
  std::string path;
  if (!DeviceMountPath(node, spec, step, &path, at)) return step;
  Judge(step, CallExpandVolume(node, by, spec, path, new_size, old_size));
  step.fallback = step.answered_not_supported();
  return step;
}

Step VolumeOperations::NodeExpand(Node& node, const VolumeSpec& spec, const std::string& device,
                                  const std::string& pod_dir, const std::string& new_size,
                                  const std::string& old_size) {
  Step step;
  step.verb = "expandfs";
  if (spec.inline_volume) {
    // expandVolumeDuringMount works on PersistentVolumes only.
    step.skipped = "inline volume: kubelet never sends expandfs for it";
    step.error = "PersistentVolume not found for spec: " + spec.name;
    Act(node, step, {KubeletAction::Kind::kSkipCall, pod_dir, "", "expandfs: " + step.skipped, ""});
    return step;
  }
  Judge(step, CallExpandFs(node, spec, device, pod_dir, new_size, old_size));
  if (step.answered_not_supported()) {
    step.fallback = true;
    Do(
        node, {KubeletAction::Kind::kResizeFs, pod_dir, device, "", ""},
        [&] { node.filesystem().ResizeFs(device, pod_dir); }, step);
  }
  return step;
}

VolumeSpec VolumeOperations::ReconstructedSpec(const OnDiskVolume& v) {
  VolumeSpec spec;
  spec.name = v.volume_name;
  spec.driver = v.driver;
  return spec;
}

Step VolumeOperations::ReconstructVolume(Node& node, const OnDiskVolume& v, bool attachable) {
  Step step;
  step.verb = "getvolumename";
  if (!attachable) return step;  // a non-attachable name needs no driver call
  const VolumeSpec spec = ReconstructedSpec(v);
  // GetUniqueVolumeNameFromSpec, then updateStates' getDeviceMountPath.
  Step name = GetVolumeName(node, Component::kKubelet, spec);
  if (name.ok()) name = GetVolumeName(node, Component::kKubelet, spec);
  return name;
}

VolumeOperations::OrphanTeardown VolumeOperations::TearDownOrphan(Node& node, const OnDiskVolume& v,
                                                                  bool attachable,
                                                                  bool reconstructed) {
  OrphanTeardown result;
  result.tear_down = TearDownAt(node, v.driver, v.pod_dir);
  if (!result.tear_down.ok() || !attachable || !reconstructed) return result;
  result.unmount_device = UnmountDevice(node, ReconstructedSpec(v), v.device_mount_path);
  return result;
}

std::vector<OnDiskVolume> VolumeOperations::VolumesOnDisk(Node& node) const {
  std::vector<OnDiskVolume> found;
  NodeFilesystem& fs = node.filesystem();
  auto root_it = kubelet_roots_.find(node.name());
  const std::string root = root_it == kubelet_roots_.end() ? node.kubelet_root() : root_it->second;
  const std::string pods_dir = root + "/pods";
  for (const auto& uid : fs.ListDir(pods_dir)) {
    const std::string volumes_dir = pods_dir + "/" + uid + "/volumes";
    for (const auto& escaped : fs.ListDir(volumes_dir)) {
      const std::string driver = UnescapeDriverName(escaped);
      const KubeletPaths paths(root, driver);
      for (const auto& name : fs.ListDir(volumes_dir + "/" + escaped)) {
        OnDiskVolume v;
        v.pod_uid = uid;
        v.driver = driver;
        v.volume_name = name;
        v.pod_dir = paths.PodVolumeDir(uid, name);
        v.pod_dir_mounted = fs.IsMountPoint(v.pod_dir);
        v.device_mount_path = paths.DeviceMountPath(name);
        v.device_mounted =
            fs.PathExists(v.device_mount_path) && fs.IsMountPoint(v.device_mount_path);
        found.push_back(std::move(v));
      }
    }
  }
  return found;
}

}  // namespace flexkit::sim
