#pragma once
// kubelet's and the attach/detach controller's volume operations on a
// FlexVolume driver: the one implementation that flexsim's kubelet,
// controller and `call`, and every flexconform case, sequence, failover
// and replay go through. Each operation follows one function of Kubernetes'
// operation generator (pkg/volume/util/operationexecutor/
// operation_generator.go) and the flexvolume plugin it drives
// (pkg/volume/flexvolume/), named where it is implemented: the driver
// calls it makes and in which order, the calls it skips, and what kubelet
// does itself when a driver answers Not supported (reference
// flexvolume-protocol §3.4, §5, §7).
//
// Seams: a DriverCaller runs each driver call (flexsim: through the
// component's prober and its Not-supported cache; flexconform: with the
// case's deadlines, judged by its rules); the node's NodeFilesystem does
// kubelet's own mounts and directories; a VolumeObserver sees every call
// and every kubelet-side action, and cannot change the flow.
//
// An operation never throws for a driver's answer or a failed kubelet
// step: it returns what kubelet would have (the error it logs before it
// retries), and leaves the node as kubelet leaves it.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/argv_builder.h"
#include "simulator/driver_invoker.h"
#include "simulator/kubelet_paths.h"
#include "simulator/node.h"
#include "simulator/redactor.h"
#include "simulator/version_profile.h"
#include "simulator/volume_spec.h"

namespace flexkit::sim {

// Who makes a call: kubelet on its node, or the attach/detach controller
// (kube-controller-manager; kubelet itself with kubelet-managed attach).
enum class Component { kKubelet, kController };
const char* ComponentName(Component component);  // "kubelet", "controller"

// One driver call as an operation makes it.
struct DriverCall {
  Node& node;  // whose namespace and environment it runs in
  Component component;
  std::string driver;  // the volume's driver name, "vendor/driver"
  Args args;
  Redactor redactor;  // the secrets the arguments carry
};

class DriverCaller {
 public:
  virtual ~DriverCaller() = default;
  virtual CallResult Call(const DriverCall& call) = 0;
};

// Something kubelet did itself (not a driver call).
struct KubeletAction {
  enum class Kind {
    kMakeDirs,         // prepareForMount's MkdirAll 0750
    kSkipCall,         // a driver call kubelet did not make; `note` says why
    kBindMount,        // mounter-defaults SetUpAt: `source` bound onto `path`
    kRemountReadOnly,  // the read-only remount of that bind
    kFormatAndMount,   // attacher-defaults MountDevice: `source` (the device), fsType in `note`
    kUnmount,          // a default unmount (unmounter/detacher-defaults) or a clean-up
    kRemoveDir,        // os.Remove after a teardown or a failed SetUp
    kSetOwnership,     // SetVolumeOwnership (fsGroup `note`)
    kResizeFs,         // GenericResizeFS after expandfs's Not supported: `source` (the device)
  };
  Kind kind;
  std::string path;
  std::string source;
  std::string note;
  std::string error;  // empty: done; otherwise what failed
};
const char* ActionName(KubeletAction::Kind kind);  // "mkdir", "skip", "bind mount", ...

class VolumeObserver {
 public:
  virtual ~VolumeObserver() = default;
  virtual void DriverCalled(const DriverCall& /*call*/, const CallResult& /*result*/) {}
  virtual void KubeletActed(const Node& /*node*/, const KubeletAction& /*action*/) {}
};

// One step of an operation: a driver verb, what kubelet made of its
// answer, or why it never made the call.
struct Step {
  std::string verb;                // the step's own driver verb
  std::optional<CallResult> call;  // its call; empty when kubelet did not make it
  std::string skipped;             // why kubelet did not make the call
  bool fallback = false;           // Not supported: kubelet did the step itself
  std::string error;               // kubelet's error for the step; empty: done
  // The verb whose answer failed the step: `verb`, or getvolumename when
  // the device mount path could not be had; empty when kubelet's own
  // action failed (or nothing did). `failed_call` is that call.
  std::string failed_verb;
  std::optional<CallResult> failed_call;
  std::string device;                  // attach, waitforattach: the device kubelet carries on with
  bool attached = false;               // isattached: the answer (Success only)
  std::vector<KubeletAction> actions;  // what kubelet did itself in the step, in order

  bool ok() const { return error.empty(); }
  bool answered_success() const { return call && call->ok(); }
  bool answered_not_supported() const { return call && call->not_supported(); }
  // A driver call's answer failed the step (not kubelet's own action).
  bool failed_by_call() const { return failed_call.has_value(); }
};

// GenerateMountVolumeFunc's steps, as far as they went.
struct MountResult {
  Step wait_for_attach;  // attachable volumes
  Step mount_device;     // attachable volumes whose device was not mounted yet
  Step set_up;
  std::string device;  // what waitforattach gave mountdevice
  bool ok() const { return wait_for_attach.ok() && mount_device.ok() && set_up.ok(); }
  // The first step that failed; nullptr when none did.
  const Step* failed() const;
  std::string error() const;
};

// A pod volume directory found on a node's disk (reconstruction).
struct OnDiskVolume {
  std::string pod_uid;
  std::string driver;  // unescaped: "vendor/driver"
  std::string volume_name;
  std::string pod_dir;
  bool pod_dir_mounted = false;
  std::string device_mount_path;
  bool device_mounted = false;
};

// kubelet's retry of its own unmount after a transient EBUSY: the
// reconciler retries the operation, and with the driver's unmount cached
// as Not supported a retry is this unmount again.
struct UnmountRetry {
  int attempts = 10;
  std::chrono::milliseconds wait{100};
};

class VolumeOperations {
 public:
  VolumeOperations(const VersionProfile& profile, DriverCaller& caller,
                   VolumeObserver* observer = nullptr);

  const VersionProfile& profile() const { return *profile_; }
  // From now on, call the driver as that kubelet release would.
  void UseProfile(const VersionProfile& profile);
  // The operator's --root-dir on `node` (default: the node's kubelet root).
  void UseKubeletRoot(const Node& node, const std::string& root);
  KubeletPaths Paths(const Node& node, const std::string& driver) const;
  void SetUnmountRetry(UnmountRetry retry) { unmount_retry_ = retry; }

  // The options JSON kubelet sends with every verb but mount (pod keys and
  // secrets only go with mount: `pod`).
  std::string OptionsJson(const VolumeSpec& spec, const MountExtras* pod = nullptr) const;

  // The prober's init of a driver (plugin.go NewFlexVolumePlugin), made
  // on discovery and on every change in the driver's folder.
  Step Init(Node& node, Component by, const std::string& driver);
  // plugin.go GetVolumeName: the populators' unique name, getDeviceMountPath
  // and the detach func all run it. Not supported is no error (the name is
  // spec.Name() either way).
  Step GetVolumeName(Node& node, Component by, const VolumeSpec& spec);

  // The controller's operations (kubelet's own with kubelet-managed attach),
  // run on `node` (the control plane, or the node for kubelet), about the
  // node named `node_name`.
  // GenerateAttachVolumeFunc -> attacher.go Attach. Not supported:
  // attacher-defaults Attach, device "".
  Step Attach(Node& node, Component by, const VolumeSpec& spec, const std::string& node_name);
  // GenerateDetachVolumeFunc: GetVolumeName (getvolumename), then
  // detacher.go Detach with spec.Name().
  Step Detach(Node& node, Component by, const VolumeSpec& spec, const std::string& node_name);
  // GenerateVolumesAreAttachedFunc -> attacher.go VolumesAreAttached, one
  // volume: isattached. Not supported: the volume counts as attached.
  Step IsAttached(Node& node, Component by, const VolumeSpec& spec, const std::string& node_name);

  // kubelet's operations on `node`.
  // GenerateMountVolumeFunc: for an attachable volume, WaitForAttach with
  // the device path kubelet holds ("" when attach gave none, and after a
  // reconstruction), then MountDevice unless kubelet holds the device as
  // mounted already (getDeviceMountPath's getvolumename runs either way);
  // then SetUp. Stops at the first step that fails.
  MountResult MountVolume(Node& node, const VolumeSpec& spec, const MountExtras& pod,
                          bool attachable, const std::string& device_path,
                          bool device_globally_mounted, bool fs_group_capability);
  // attacher.go WaitForAttach. Not supported: the device path it was given.
  Step WaitForAttach(Node& node, const VolumeSpec& spec, const std::string& device_path);
  // getDeviceMountPath (getvolumename), then attacher.go MountDevice:
  // prepareForMount (MkdirAll 0750; a mount point already: no call), then
  // mountdevice; Not supported: attacher-defaults MountDevice, a
  // FormatAndMount of a device, nothing for "".
  // `at`: the device mount path when the kubelet root is not the node's
  // (flexsim call's DIR); getvolumename is asked all the same.
  Step MountDevice(Node& node, const VolumeSpec& spec, const std::string& device,
                   const std::string& at = "");
  // mounter.go SetUpAt: prepareForMount, then mount; Not supported:
  // mounter-defaults SetUpAt binds the device mount path (getDeviceMountPath
  // first). Any error removes the pod dir (os.Remove). After a success the
  // fsGroup ownership change of a read-write volume, when the driver's
  // capability allows it (its error ignored).
  // `at`: the pod dir, when not the one the kubelet root gives.
  Step SetUp(Node& node, const VolumeSpec& spec, const MountExtras& pod, bool fs_group_capability,
             const std::string& at = "");
  // GenerateUnmountVolumeFunc -> unmounter.go TearDownAt: nothing when the
  // pod dir is missing; unmount; Not supported: unmounter-defaults
  // (CleanupMountPoint); then os.Remove when the dir is still there.
  Step TearDown(Node& node, const VolumeSpec& spec, const std::string& pod_uid);
  Step TearDownAt(Node& node, const std::string& driver, const std::string& pod_dir);
  // GenerateUnmountDeviceFunc: getDeviceMountPath (getvolumename), then
  // detacher.go UnmountDevice: nothing when the path is missing, no call
  // when it is no mount point, unmountdevice; Not supported:
  // detacher-defaults unmount; then os.Remove when the dir is still there.
  Step UnmountDevice(Node& node, const VolumeSpec& spec, const std::string& at = "");
  // expander.go ExpandVolumeDevice: getDeviceMountPath, then expandvolume
  // with the device mount path and the sizes in bytes.
  Step ExpandVolume(Node& node, Component by, const VolumeSpec& spec, const std::string& new_size,
                    const std::string& old_size, const std::string& at = "");
  // expander.go NodeExpand (expandVolumeDuringMount / online): expandfs
  // with the device and the pod dir. Only for a PersistentVolume. Not
  // supported: GenericResizeFS of the device (mounted at the pod dir).
  Step NodeExpand(Node& node, const VolumeSpec& spec, const std::string& device,
                  const std::string& pod_dir, const std::string& new_size,
                  const std::string& old_size);

  // What kubelet finds on `node`'s disk at start: every pod volume dir of
  // a FlexVolume driver (<root>/pods/<uid>/volumes/<vendor~driver>/<name>),
  // with whether it and the volume's device mount path are mounted.
  std::vector<OnDiskVolume> VolumesOnDisk(Node& node) const;
  // The spec kubelet rebuilds from a volume on disk (flexvolume plugin.go
  // ConstructVolumeSpec): an inline volume named after the dir, of its
  // driver, and nothing else, so its options are fsType "", readwrite "rw"
  // and pvOrVolumeName.
  static VolumeSpec ReconstructedSpec(const OnDiskVolume& v);
  // A kubelet restart's reconstruction of one volume on disk
  // (reconstruct_common.go reconstructVolume, reconstruct.go
  // updateStates): an attachable volume's unique name and device mount
  // path, each a getvolumename with the reconstructed spec. A failure
  // leaves the volume out of kubelet's state (volumesFailedReconstruction).
  // A reconstructed volume is mounted "uncertain" with device path "": a
  // pod still there gets MountVolume again with it (reference §5.4).
  Step ReconstructVolume(Node& node, const OnDiskVolume& v, bool attachable);
  // A volume found on disk whose pod is gone: UnmountVolume of its pod dir,
  // then, when it was reconstructed, UnmountDevice with the reconstructed
  // spec (an orphan that failed reconstruction gets only the first:
  // cleanOrphanVolumes). kubelet never detaches it: once node status is
  // read its attachability is False (UpdateReconstructedVolumeAttachability).
  struct OrphanTeardown {
    Step tear_down;
    Step unmount_device;
    bool ok() const { return tear_down.ok() && unmount_device.ok(); }
  };
  OrphanTeardown TearDownOrphan(Node& node, const OnDiskVolume& v, bool attachable,
                                bool reconstructed);

  // The *-defaults.go fallbacks: what kubelet does itself when a verb
  // answers Not supported. Each adds its actions, and its error if any, to
  // `step`.
  // attacher-defaults.go MountDevice: SafeFormatAndMount of `device` at
  // `path` (fsType "" is ext4), read-only as the spec says; nothing for "".
  void DefaultMountDevice(Node& node, const VolumeSpec& spec, const std::string& device,
                          const std::string& path, Step& step);
  // mounter-defaults.go SetUpAt: `source` (the device mount path) bound
  // onto `dir`. Upstream's bind takes no "ro"; the read-only remount of a
  // read-only volume here stands for the container runtime's read-only
  // mount of it (kubelet's makeMounts): the pod dir is where the harness
  // sees what the pod sees.
  void DefaultSetUp(Node& node, const VolumeSpec& spec, const std::string& source,
                    const std::string& dir, Step& step);
  // unmounter-defaults.go TearDownAt (CleanupMountPoint) and
  // detacher-defaults.go UnmountDevice: kubelet unmounts `dir` when it is a
  // mount point, retrying a transient EBUSY.
  void DefaultUnmount(Node& node, const std::string& dir, Step& step);
  // kubelet's os.Remove of `dir` when it is still there: after a teardown
  // (unmounter.go, detacher.go: "Flexvolume driver may remove the
  // directory") and after a failed SetUp (k/k#49539).
  void RemoveDir(Node& node, const std::string& dir, Step& step);

  // Single driver calls, shaped as the operations shape them, without the
  // rest of the operation (kubelet's skips, fallbacks and directories): a
  // check of a driver's answer in a state kubelet reaches by a path the
  // simulator does not take (a bind mount IsLikelyNotMountPoint cannot see,
  // the retry of an uncertain operation), or a call kubelet never makes.
  CallResult CallInit(Node& node, Component by, const std::string& driver);
  CallResult CallGetVolumeName(Node& node, Component by, const VolumeSpec& spec);
  CallResult CallAttach(Node& node, Component by, const VolumeSpec& spec,
                        const std::string& node_name);
  CallResult CallWaitForAttach(Node& node, const VolumeSpec& spec, const std::string& device);
  CallResult CallIsAttached(Node& node, Component by, const VolumeSpec& spec,
                            const std::string& node_name);
  CallResult CallMountDevice(Node& node, const VolumeSpec& spec, const std::string& path,
                             const std::string& device);
  CallResult CallMount(Node& node, const VolumeSpec& spec, const MountExtras& pod,
                       const std::string& dir);
  CallResult CallUnmount(Node& node, const std::string& driver, const std::string& dir);
  CallResult CallUnmountDevice(Node& node, const std::string& driver, const std::string& path);
  CallResult CallDetach(Node& node, Component by, const VolumeSpec& spec,
                        const std::string& node_name);
  CallResult CallExpandVolume(Node& node, Component by, const VolumeSpec& spec,
                              const std::string& path, const std::string& new_size,
                              const std::string& old_size);
  CallResult CallExpandFs(Node& node, const VolumeSpec& spec, const std::string& device,
                          const std::string& pod_dir, const std::string& new_size,
                          const std::string& old_size);
  // Any argv (a made-up verb, an old release's shape), as `by` would send it.
  CallResult CallDriver(Node& node, Component by, const std::string& driver, const Args& args,
                        const Redactor& redactor = Redactor());

 private:
  CallResult Run(Node& node, Component by, const std::string& driver, const Args& args,
                 const Redactor& redactor);
  void Act(Node& node, Step& step, KubeletAction action);
  // Does `what` on node's filesystem as kubelet action `action`; false (and
  // the error in step.error) when it throws.
  bool Do(Node& node, KubeletAction action, const std::function<void()>& what, Step& step);
  // prepareForMount: true when the driver is to be called.
  bool PrepareForMount(Node& node, const std::string& dir, Step& step);
  // The step's call: its verdict decides ok, Not supported or the error.
  void Judge(Step& step, const CallResult& r);
  // getDeviceMountPath: false (step failed) when getvolumename fails.
  // `at`, when given, names the path; getvolumename is asked all the same.
  bool DeviceMountPath(Node& node, const VolumeSpec& spec, Step& step, std::string* path,
                       const std::string& at = "");
  Redactor SecretRedactor(const MountExtras& pod) const;

  const VersionProfile* profile_;
  ArgvBuilder argv_;
  DriverCaller& caller_;
  VolumeObserver* observer_;
  std::map<std::string, std::string> kubelet_roots_;  // node name -> --root-dir
  UnmountRetry unmount_retry_;
};

// The error kubelet reports for a driver call that did not succeed.
std::string CallError(const CallResult& r);

}  // namespace flexkit::sim
