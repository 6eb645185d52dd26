// [teardown]: teardown verbs on things that were never set up (F10, F12)
// or that a crashed node left behind, each directory holding user files
// that must survive (rule "data loss"), and waitforattach with an empty
// device (kubelet sends "" when the attach result carried none).
#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

void UnmountNeverMounted(CaseContext& c) {
  auto& n = c.node();
  const std::string dir = c.Paths(n).PodVolumeDir(c.Unique("uid"), c.Unique("vol"));
  n.filesystem().MakeDirs(dir, 0750);
  auto planted = PlantUserFiles(c, n, dir);
  auto r = c.ops().CallUnmount(n, c.profile().driver_name, dir);
  CheckPlantedFiles(c, planted, "unmount");
  if (!r.ok() && !r.not_supported()) {
    c.Fail("F10 unmount-idempotent: unmount of a never-mounted dir succeeds",
           "unmount: " + r.verdict.error);
  }
  KubeletRemoveDir(n, dir);
}

void UnmountMissingDir(CaseContext& c) {
  auto& n = c.node();
  const std::string dir = c.Paths(n).PodVolumeDir(c.Unique("uid"), c.Unique("vol"));
  auto r = c.beyond_kubelet().CallUnmount(n, c.profile().driver_name, dir);
  if (!r.ok() && !r.not_supported()) {
    // kubelet skips the call when the dir is missing: tolerated, but wrong.
    c.Warn("unmount of a missing dir failed (kubelet never calls it so, other callers do): " +
           r.verdict.error);
  }
}

void DetachNeverAttached(CaseContext& c) {
  auto& n = c.node();
  auto r = c.ops().CallDetach(n, sim::Component::kController, c.Volume(c.Unique("vol")), n.name());
  if (!r.ok() && !r.not_supported()) {
    c.Fail("F12 detach-idempotent: detach of a never-attached volume succeeds",
           "detach: " + r.verdict.error);
  }
}

void UnmountDeviceNeverMounted(CaseContext& c) {
  auto& n = c.node();
  const std::string dir = c.Paths(n).DeviceMountPath(c.Unique("vol"));
  n.filesystem().MakeDirs(dir, 0750);
  auto planted = PlantUserFiles(c, n, dir);
  auto r = c.ops().CallUnmountDevice(n, c.profile().driver_name, dir);
  CheckPlantedFiles(c, planted, "unmountdevice");
  // kubelet skips unmountdevice where the path is no mount point (§5.9
  // step 4), so only a direct caller meets this answer.
  if (!r.ok() && !r.not_supported()) {
    c.Warn(
        "F10 unmountdevice-idempotent: unmountdevice is \"ensure unmounted\": unmountdevice of a "
        "dir "
        "that is no mount point: " +
        r.verdict.error + " (a WARN: kubelet skips the call there)");
  }
  KubeletRemoveDir(n, dir);
}

std::string CrashableFixture(const DriverProfile& p) {
  return p.fixture.kind == "command"
             ? "profile: a command fixture's backend cannot follow a node crash"
             : "";
}

// A node crashed with a volume mounted and came back: its mounts are gone,
// the pod dir (and the global dir) are left, holding whatever was written
// under them. kubelet's reconstruction calls unmount on the pod dir, which
// must succeed and keep every file; unmountdevice is skipped, as the
// global dir is no mount point.
void UnmountAfterNodeCrash(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  c.transcript().AddEvent("node crashes", {{"node", n.name()}});
  n.Crash();
  c.fixture().NodeCrashed(n);
  n.Restart();
  c.fixture().NodeRestarted(n);
  c.transcript().AddEvent("node back", {{"node", n.name()}});
  auto planted = PlantUserFiles(c, n, v.pod_dir);
  auto r = c.ops().CallUnmount(n, spec.driver, v.pod_dir);
  CheckPlantedFiles(c, planted, "unmount");
  if (!r.ok() && !r.not_supported()) {
    c.Fail("F10 unmount-idempotent: unmount of a pod dir a crashed node left succeeds",
           "unmount: " + r.verdict.error);
  }
  // kubelet's own teardown from here: the pod dir goes, then the global
  // dir is no mount point (unmountdevice skipped) and detach follows.
  TearDownAll(c);
}

void WaitForAttachEmptyDevice(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  const sim::Step a = c.ops().Attach(n, sim::Component::kController, spec, n.name());
  if (!a.ok()) c.Fail("F8 attach-succeeds: attach succeeds", "attach: " + a.error);
  // kubelet passes attach's device; "" only when attach gave none (§5.4).
  const std::string device = a.device;
  c.tracker().Push("detach " + spec.name, [&c, &n, spec] { c.Detach(n, spec); });
  const sim::Step w = c.ops().WaitForAttach(n, spec, device);
  if (!w.ok())
    c.Fail("waitforattach-empty-device: waitforattach accepts \"\" and finds the device",
           "waitforattach \"" + device + "\": " + w.error);
  if (!device.empty() && w.answered_success() && w.device.empty()) {
    c.Fail("F8 waitforattach-device: waitforattach returns the device",
           "waitforattach \"\" returned no device");
  }
  TearDownAll(c);
}

}  // namespace

void AddTeardownCases(std::vector<Case>& cases) {
  cases.push_back({"teardown/unmount-never-mounted-dir",
                   {"teardown", "root"},
                   {"F10"},
                   Always,
                   UnmountNeverMounted});
  cases.push_back(
      {"teardown/unmount-missing-dir", {"teardown", "root"}, {"F10"}, Always, UnmountMissingDir});
  cases.push_back({"teardown/detach-never-attached",
                   {"teardown"},
                   {"F12", "F13"},
                   AttachableOnly,
                   DetachNeverAttached});
  cases.push_back({"teardown/unmountdevice-never-mounted",
                   {"teardown", "root"},
                   {"F10"},
                   AttachableOnly,
                   UnmountDeviceNeverMounted});
  cases.push_back({"teardown/unmount-after-node-crash",
                   {"teardown", "root"},
                   {"F10", "F26"},
                   CrashableFixture,
                   UnmountAfterNodeCrash});
  cases.push_back({"teardown/waitforattach-empty-device",
                   {"teardown"},
                   {"F13"},
                   AttachableOnly,
                   WaitForAttachEmptyDevice});
}

}  // namespace flexkit::conform
