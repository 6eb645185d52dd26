// [failure]: every verb made to fail the way production makes it fail, so
// the error paths of a driver run at all: a target that is a regular file,
// whose parent is missing or read-only; a device that does not exist; an
// option the backend must refuse; a busy mount; the backend unreachable.
// Each reply must be one well-formed JSON document (the per-call rules
// FAIL anything else, so a shell error printed after a failed `mount`, or a
// second document, shows here); a Failure should say `Failure` and exit 1
// (anything else WARNs, as kubelet still reads it as a failure); a Success
// must be true: the mount is there and usable.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

constexpr const char* kBusyRule =
    "busy-unmount-fails: a busy mount cannot be unmounted; the reply is a Failure (exit 1), the "
    "mount stays, and kubelet's retry succeeds once it is released";
constexpr const char* kRefuseRule =
    "refused-option-fails: an option the backend refuses is a Failure, never a Success";

// Calls the verb that mounts at a target of the case's choosing
// (mountdevice for attachable drivers, mount for the others) for `spec`
// onto `target` (attachable drivers: the
// volume attached first, its detach tracked). A Success must be true, and
// is undone by the driver's own teardown verb.
// `prepare` shapes the target just before the call.
sim::CallResult MountOnto(CaseContext& c, sim::Node& n, const sim::VolumeSpec& spec,
                          const std::string& target, const std::function<void()>& prepare = {},
                          const std::string& device_override = "") {
  sim::CallResult r;
  if (c.profile().attachable()) {
    PodVolume attached = c.AttachDevice(n, spec);
    const std::string device = device_override.empty() ? attached.device : device_override;
    // kubelet's prepareForMount makes the device mount path; a case's own
    // target (or shape of it) replaces that.
    if (attached.global_path == target && !prepare) n.filesystem().MakeDirs(target, 0750);
    if (prepare) prepare();
    r = c.ops().CallMountDevice(n, spec, target, device);
    if (r.not_supported()) c.Skip("capability: mountdevice is Not supported (kubelet mounts)");
    if (r.ok()) {
      c.tracker().Push("unmountdevice " + target,
                       [&c, &n, spec, target] { c.UnmountDevice(n, spec, target); });
      c.CheckMounted(n, "mountdevice", target, spec.read_only);
    }
  } else {
    auto pod = c.Pod("pod");
    if (prepare) prepare();
    r = c.ops().CallMount(n, spec, pod, target);
    if (r.not_supported()) c.Skip("capability: mount is Not supported");
    if (r.ok()) {
      c.TrackPodTeardown(n, target);
      c.CheckMounted(n, "mount", target, spec.read_only);
    }
  }
  return r;
}

// Where kubelet would have the driver mount `volume`; `parent` set: under
// a directory of that name instead.
std::string TargetFor(CaseContext& c, sim::Node& n, const std::string& volume,
                      const std::string& parent = "") {
  std::string dir = c.profile().attachable() ? c.Paths(n).DeviceMountPath(volume)
                                             : c.Paths(n).PodVolumeDir(c.Unique("uid"), volume);
  if (parent.empty()) return dir;
  const auto p = std::filesystem::path(dir);
  return (p.parent_path() / c.Unique(parent) / p.filename()).string();
}

// The target exists as a regular file (a stale file where kubelet expects
// a directory). A Failure is right; a Success must have really mounted.
void OntoRegularFile(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  const std::string target = TargetFor(c, n, spec.name);
  c.tracker().Push("remove " + target, [&n, target] {
    std::error_code ec;
    if (!n.filesystem().IsMountPoint(target))
      std::filesystem::remove(CaseContext::HostPath(n, target), ec);
  });
  MountOnto(c, n, spec, target, [&n, target] {
    n.filesystem().MakeDirs(std::filesystem::path(target).parent_path().string(), 0750);
    n.filesystem().WriteFile(target, "a regular file, not a directory\n");
  });
  TearDownAll(c);
}

// The target's parent is missing: a driver may create it (then the Success
// must be true) or fail.
void ParentMissing(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  MountOnto(c, n, spec, TargetFor(c, n, spec.name, "missing"));
  TearDownAll(c);
}

// The target is missing under a read-only parent: nothing can create it,
// so the answer must be a Failure (a Success cannot be true).
void ReadOnlyParent(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  const std::string target = TargetFor(c, n, spec.name, "ro-parent");
  const std::string parent = std::filesystem::path(target).parent_path().string();
  MountOnto(c, n, spec, target, [&c, &n, parent] {
    n.filesystem().MakeDirs(parent, 0750);
    n.filesystem().Mount(parent, parent, "", MS_BIND, "");
    c.tracker().Push("unmount the read-only " + parent, [&n, parent] {
      KubeletUnmount(n, parent);
      n.filesystem().RemoveDir(parent);
    });
    n.filesystem().Mount("", parent, "", MS_BIND | MS_REMOUNT | MS_RDONLY, "");
  });
  TearDownAll(c);
}

// mountdevice of a device path that does not exist (a stale devicePath in
// node status).
void MissingDevice(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  MountOnto(c, n, spec, c.Paths(n).DeviceMountPath(spec.name), {},
            "/dev/flexconform-no-such-device-" + c.Unique("d"));
  TearDownAll(c);
}

std::string NeedsInvalidOptions(const DriverProfile& p) {
  return p.invalid_options.empty()
             ? "profile: invalidOptions names no option the backend must refuse"
             : "";
}

// The profile's invalidOptions over the test volume: attach (attachable
// drivers; or, when attach takes it, waitforattach and mountdevice) or
// mount must refuse it.
void InvalidOptionRefused(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  std::string shown;
  for (const auto& [key, value] : c.profile().invalid_options) {
    spec.options[key] = value;
    shown += (shown.empty() ? "" : ", ") + key + "=" + value;
  }
  if (c.profile().attachable()) {
    c.tracker().Push("detach " + spec.name, [&c, &n, spec] { c.Detach(n, spec); });
    const sim::Step a = c.ops().Attach(n, c.Attacher(), spec, n.name());
    if (!a.ok()) return TearDownAll(c);
    const sim::Step w = c.ops().WaitForAttach(n, spec, a.device);
    if (!w.ok()) return TearDownAll(c);
    const std::string global = c.Paths(n).DeviceMountPath(spec.name);
    c.tracker().Push("unmountdevice " + global,
                     [&c, &n, spec, global] { c.UnmountDevice(n, spec, global); });
    // Given "", kubelet mounts whatever waitforattach answers (§5.4).
    const sim::Step md = c.ops().MountDevice(n, spec, w.device.empty() ? a.device : w.device);
    if (md.answered_success())
      c.Fail(kRefuseRule, "attach, waitforattach and mountdevice all answered Success with " +
                              shown + " (profile invalidOptions)");
  } else {
    const std::string dir = c.Paths(n).PodVolumeDir(c.Unique("uid"), spec.name);
    n.filesystem().MakeDirs(dir, 0750);
    auto r = MountOnto(c, n, spec, dir);
    if (r.ok())
      c.Fail(kRefuseRule, "mount answered Success with " + shown + " (profile invalidOptions)");
  }
  TearDownAll(c);
}

// The mount's root directory held open (by the harness, through the
// node's namespace), as a pod's process with its cwd there would: the
// mount is busy. Nothing is written, so a read-only filesystem works too.
class HeldOpen {
 public:
  HeldOpen(sim::Node& n, const std::string& dir)
      : fd_(::open(CaseContext::HostPath(n, dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("open " + dir + " to hold the mount busy failed");
  }
  ~HeldOpen() { Release(); }
  HeldOpen(const HeldOpen&) = delete;
  HeldOpen& operator=(const HeldOpen&) = delete;
  void Release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Judges the teardown call `verb` of a busy `target`.
void ExpectBusyRefused(CaseContext& c, sim::Node& n, const sim::CallResult& r,
                       const std::string& verb, const std::string& target) {
  if (r.ok() && n.filesystem().IsMountPoint(target)) {
    c.Fail("F11 unmount-unmounts: a Success is true: unmount leaves nothing mounted",
           verb + " of busy " + target + " answered Success but it is still mounted");
  }
  if (r.ok()) {
    c.Fail(kBusyRule, verb + " of busy " + target +
                          " answered Success and detached the mount (a lazy unmount): the "
                          "process holding it writes into a filesystem nobody can reach");
  }
  if (!r.not_supported() && !n.filesystem().IsMountPoint(target)) {
    c.Fail(kBusyRule, verb + " of busy " + target + " answered Failure but removed the mount");
  }
}

void UnmountBusy(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  if (!v.driver_mounted)
    c.Skip("capability: mount is Not supported (kubelet unmounts the pod dir)");
  if (c.profile().pod_volume_is_directory && !n.filesystem().IsMountPoint(v.pod_dir))
    c.Skip("profile: podVolume: directory, and nothing is mounted at the pod dir to be busy");
  HeldOpen busy(n, v.pod_dir);
  auto r = c.ops().CallUnmount(n, v.spec.driver, v.pod_dir);
  ExpectBusyRefused(c, n, r, "unmount", v.pod_dir);
  busy.Release();
  // kubelet retries on its next reconcile: now it must succeed.
  c.tracker().RunNow(v.pod_undo);
  TearDownAll(c);
}

void UnmountDeviceBusy(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  c.tracker().RunNow(v.pod_undo);
  if (!n.filesystem().IsMountPoint(v.global_path))
    c.Fail("F19 mountdevice-mounts: mountdevice leaves a real mount at the global path",
           v.global_path + " is not a mount point after the pod's unmount");
  HeldOpen busy(n, v.global_path);
  auto r = c.ops().CallUnmountDevice(n, v.spec.driver, v.global_path);
  if (r.not_supported()) c.Skip("capability: unmountdevice is Not supported (kubelet unmounts)");
  ExpectBusyRefused(c, n, r, "unmountdevice", v.global_path);
  busy.Release();
  TearDownAll(c);
}

// The node's backend stops answering: setting a volume up must fail (a
// Success must be true), and teardown meanwhile either fails, leaving the
// mount, or really unmounts. Once it answers again, everything works.
void BackendUnreachable(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  c.transcript().AddEvent("backend unreachable", {{"node", n.name()}});
  c.fixture().SetBackendReachable(n, false);
  sim::CallResult up;
  if (c.profile().attachable()) {
    // A request queued meanwhile runs when the backend answers again: its
    // attachment is undone by the detach.
    c.tracker().Push("detach " + spec.name, [&c, &n, spec] { c.Detach(n, spec); });
    up = c.ops().CallAttach(n, c.Attacher(), spec, n.name());
  } else {
    const std::string dir = c.Paths(n).PodVolumeDir(c.Unique("uid"), spec.name);
    n.filesystem().MakeDirs(dir, 0750);
    up = MountOnto(c, n, spec, dir);
  }
  c.fixture().SetBackendReachable(n, true);
  c.transcript().AddEvent("backend reachable", {{"node", n.name()}});
  if (up.ok() && c.profile().attachable() && up.verdict.status &&
      !up.verdict.status->device.empty()) {
    c.Warn("attach answered Success (device " + up.verdict.status->device +
           ") while the backend could not be reached");
  }
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  c.tracker().RunNow(v.pod_undo);
  if (c.profile().attachable() && n.filesystem().IsMountPoint(v.global_path)) {
    c.fixture().SetBackendReachable(n, false);
    c.transcript().AddEvent("backend unreachable", {{"node", n.name()}});
    auto r = c.ops().CallUnmountDevice(n, spec.driver, v.global_path);
    c.fixture().SetBackendReachable(n, true);
    c.transcript().AddEvent("backend reachable", {{"node", n.name()}});
    if (r.ok() && n.filesystem().IsMountPoint(v.global_path)) {
      c.Fail("F11 unmountdevice-unmounts: a Success is true: unmountdevice leaves nothing mounted",
             "with the backend unreachable, unmountdevice answered Success but " + v.global_path +
                 " is still mounted");
    }
  }
  TearDownAll(c);
}

}  // namespace

void AddFailurePathCases(std::vector<Case>& cases) {
  cases.push_back({"failure/mount-onto-regular-file",
                   {"failure", "root"},
                   {"F1", "F4", "F5", "F30"},
                   Always,
                   OntoRegularFile});
  cases.push_back({"failure/mount-parent-missing",
                   {"failure", "root"},
                   {"F1", "F4", "F5", "F30"},
                   Always,
                   ParentMissing});
  cases.push_back({"failure/mount-read-only-parent",
                   {"failure", "root"},
                   {"F1", "F4", "F5", "F30"},
                   Always,
                   ReadOnlyParent});
  cases.push_back({"failure/mountdevice-missing-device",
                   {"failure", "root"},
                   {"F1", "F4", "F5", "F30"},
                   AttachableOnly,
                   MissingDevice});
  cases.push_back({"failure/invalid-option-refused",
                   {"failure", "root"},
                   {"F4", "F5", "F30"},
                   NeedsInvalidOptions,
                   InvalidOptionRefused});
  cases.push_back(
      {"failure/unmount-busy", {"failure", "root"}, {"F10", "F11", "F30"}, Always, UnmountBusy});
  cases.push_back({"failure/unmountdevice-busy",
                   {"failure", "root"},
                   {"F10", "F11", "F30"},
                   AttachableOnly,
                   UnmountDeviceBusy});
  cases.push_back({"failure/backend-unreachable",
                   {"failure", "root", "slow", "waits"},
                   {"F28", "F30"},
                   Partitionable,
                   BackendUnreachable});
}

}  // namespace flexkit::conform
