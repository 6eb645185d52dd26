// [restart]: what kubelet does with the volumes it finds on disk when it
// starts again (pkg/kubelet/volumemanager/reconciler/reconstruct.go and
// reconstruct_common.go, the reconstruction every kubelet runs since 1.30).
// Each volume comes back mounted "uncertain" with device path "": a pod
// still there gets its MountVolume again, whose waitforattach is given ""
// (node status, where the controller records attach's device, is read
// only later, and with kubelet-managed attach never lists it), while
// mountdevice and mount are skipped where the mounts are still there. A
// volume whose pod was deleted while kubelet was down is torn down with
// the spec kubelet rebuilds from its directory (flexvolume plugin.go
// ConstructVolumeSpec): its options are only fsType "", readwrite "rw" and
// pvOrVolumeName.
#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

constexpr const char* kRemountRule =
    "waitforattach-empty-device: after a kubelet restart waitforattach is given \"\" and finds the "
    "device";
constexpr const char* kReconstructRule =
    "F29 getvolumename-never-fails: getvolumename never fails, also for the spec kubelet rebuilds "
    "at a restart";

// The case's volumes on `n`'s disk, as a restarted kubelet finds them.
std::vector<sim::OnDiskVolume> OnDisk(CaseContext& c, sim::Node& n) {
  std::vector<sim::OnDiskVolume> found;
  for (auto& v : c.ops().VolumesOnDisk(n)) {
    if (v.driver == c.profile().driver_name) found.push_back(std::move(v));
  }
  return found;
}

// reconstructVolume for each volume on disk; true when it was reconstructed.
bool Reconstruct(CaseContext& c, sim::Node& n, const sim::OnDiskVolume& v) {
  const sim::Step rec = c.ops().ReconstructVolume(n, v, c.profile().attachable());
  if (rec.ok()) return true;
  c.Record(kReconstructRule, "after a kubelet restart, getvolumename with the spec rebuilt from " +
                                 v.pod_dir + " failed: " + rec.error +
                                 ". kubelet leaves the volume out of its state");
  return false;
}

// kubelet restarts while the pod runs: its volume is reconstructed and
// MountVolume runs again with device path "". With kubelet-managed attach
// node status never supplies the device, so a waitforattach that cannot
// find it from "" fails every remount of the pod for good (FAIL); with the
// controller, node status supplies it on the next try (WARN).
void RemountAfterKubeletRestart(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  CheckDataRoundTrip(c, v, "before-restart.txt");
  c.transcript().AddEvent("kubelet restarts", {{"node", n.name()}});
  bool reconstructed = true;
  for (const auto& on_disk : OnDisk(c, n)) reconstructed &= Reconstruct(c, n, on_disk);
  const bool attachable = c.profile().attachable();
  const bool fs_group = !c.profile().capabilities || c.profile().capabilities->fs_group;
  // Not reconstructed: the volume is new to kubelet, which gets its device
  // path as for any new volume (attach's).
  const std::string device_path = reconstructed ? "" : v.attach_device;
  const std::size_t mark = c.findings().size();
  sim::MountResult m =
      c.ops().MountVolume(n, v.spec, v.pod, attachable, device_path, false, fs_group);
  if (attachable && !m.wait_for_attach.ok()) {
    const std::string why = "waitforattach \"" + device_path +
                            "\" after a kubelet restart failed: " + m.wait_for_attach.error;
    if (c.profile().kubelet_managed_attach) {
      c.Fail(kRemountRule, why +
                               ". With kubelet-managed attach the device path stays \"\": every "
                               "remount of this pod fails");
    }
    // The reply kubelet could not use is part of that WARN, not a FAIL of its own.
    const auto findings = c.findings();
    for (std::size_t i = mark; i < findings.size(); ++i) {
      if (findings[i].why.rfind("waitforattach", 0) == 0)
        c.Withdraw(mark, findings[i].rule, findings[i].why);
    }
    c.Warn(why + " [" + kRemountRule +
           "; a WARN: the controller's node status gives the device on the next try]");
    m = c.ops().MountVolume(n, v.spec, v.pod, attachable, v.attach_device, false, fs_group);
  }
  if (const sim::Step* failed = m.failed()) {
    c.Fail(kRemountRule,
           "MountVolume after a kubelet restart failed at " + failed->verb + ": " + failed->error);
  }
  CheckDataKept(c, v, "before-restart.txt", "after a kubelet restart",
                "data-kept: a mounted volume keeps its data");
  TearDownAll(c);
}

// The pod is deleted while kubelet is down: at start kubelet finds its
// volume on disk and tears it down with the rebuilt spec (unmount, then
// unmountdevice where the global path is mounted). A volume it cannot
// reconstruct has only its pod dir unmounted: the device stays mounted.
void PodDeletedWhileKubeletDown(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  c.transcript().AddEvent("kubelet stops; the pod is deleted; kubelet starts",
                          {{"node", n.name()}, {"pod", v.pod.pod_uid}});
  const bool attachable = c.profile().attachable();
  for (const auto& on_disk : OnDisk(c, n)) {
    const bool reconstructed = Reconstruct(c, n, on_disk);
    const auto t = c.ops().TearDownOrphan(n, on_disk, attachable, reconstructed);
    if (!t.tear_down.ok()) {
      c.Fail("F10 unmount-succeeds: unmount of a pod dir found at a restart succeeds",
             "unmount " + on_disk.pod_dir + ": " + t.tear_down.error);
    }
    if (!t.unmount_device.ok()) {
      c.Fail("F10 unmountdevice-succeeds: unmountdevice of a volume found at a restart succeeds",
             "unmountdevice " + on_disk.device_mount_path +
                 " with the rebuilt spec: " + t.unmount_device.error);
    }
    if (n.filesystem().IsMountPoint(on_disk.device_mount_path)) {
      c.Fail(reconstructed ? "F11 unmountdevice-unmounts: unmountdevice leaves nothing mounted"
                           : kReconstructRule,
             on_disk.device_mount_path +
                 " is still mounted after kubelet's teardown of the "
                 "volume it found at its restart");
    }
  }
  // Then the controller detaches (with kubelet-managed attach kubelet
  // never detaches a reconstructed volume: the harness does, as an
  // operator would).
  TearDownAll(c);
}

}  // namespace

void AddRestartCases(std::vector<Case>& cases) {
  cases.push_back({"restart/remount-after-kubelet-restart",
                   {"restart", "root"},
                   {"F9", "F29"},
                   Always,
                   RemountAfterKubeletRestart});
  cases.push_back({"restart/pod-deleted-while-kubelet-down",
                   {"restart", "root"},
                   {"F10", "F11", "F29"},
                   Always,
                   PodDeletedWhileKubeletDown});
}

}  // namespace flexkit::conform
