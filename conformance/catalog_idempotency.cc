// [idempotency]: each verb repeated --repeat times on the same input gives
// the same result and no stacked mounts (F9, F12); whole up/down cycles
// repeated (csi-sanity's IdempotentCount, done for teardown too).
#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

// The call kubelet would skip (the target is already a mount point), made
// anyway, as after a kubelet restart: it must succeed and stack nothing.
void SetUpRepeated(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto pod = c.Pod("pod");
  auto v = c.SetUp(n, spec, pod);
  for (int i = 1; i < c.repeat(); ++i) {
    if (c.profile().attachable()) {
      const sim::Step a = c.ops().Attach(n, sim::Component::kController, spec, n.name());
      if (!a.ok())
        c.Fail("F9 attach-idempotent: attach is idempotent", "attach repeated: " + a.error);
      // Compared with the first attach's device ("" for none or Not supported).
      const std::string device = a.device;
      if (device != v.attach_device) {
        c.Fail("F9 attach-idempotent: attach is idempotent",
               "attach #" + std::to_string(i + 1) + " returned device '" + device + "', first '" +
                   v.attach_device + "'");
      }
      c.Require(c.ops().CallMountDevice(n, spec, v.global_path, v.device), "mountdevice",
                "F9 mountdevice-idempotent: mountdevice is idempotent");
      if (c.MountCount(n, v.global_path) != 1) {
        c.Fail("F9 mountdevice-idempotent: mountdevice is idempotent",
               "mountdevice repeated stacked " + std::to_string(c.MountCount(n, v.global_path)) +
                   " mounts on " + v.global_path);
      }
    }
    if (v.driver_mounted) {
      c.Require(c.ops().CallMount(n, spec, pod, v.pod_dir), "mount",
                "F9 mount-idempotent: mount is idempotent");
      const std::size_t mounts = c.MountCount(n, v.pod_dir);
      if (mounts > 1 || (mounts == 0 && !c.PodVolumeSetUp(n, v.pod_dir))) {
        c.Fail("F9 mount-idempotent: mount is idempotent",
               "mount repeated stacked " + std::to_string(c.MountCount(n, v.pod_dir)) +
                   " mounts on " + v.pod_dir);
      }
    }
  }
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// Teardown verbs repeated after the volume is gone: all Success.
void TearDownRepeated(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  TearDownAll(c);
  for (int i = 1; i < c.repeat(); ++i) {
    n.filesystem().MakeDirs(v.pod_dir, 0750);
    auto planted = PlantUserFiles(c, n, v.pod_dir);
    auto u = c.ops().CallUnmount(n, spec.driver, v.pod_dir);
    CheckPlantedFiles(c, planted, "unmount (repeated)");
    if (!u.ok() && !u.not_supported()) {
      c.Fail("F10 unmount-idempotent: unmount of an unmounted dir succeeds",
             "unmount repeated: " + u.verdict.error);
    }
    KubeletRemoveDir(n, v.pod_dir);
    if (c.profile().attachable()) {
      n.filesystem().MakeDirs(v.global_path, 0750);
      auto planted_global = PlantUserFiles(c, n, v.global_path);
      auto ud = c.ops().CallUnmountDevice(n, spec.driver, v.global_path);
      CheckPlantedFiles(c, planted_global, "unmountdevice (repeated)");
      // kubelet calls unmountdevice only on a mount point (§5.9 step 4):
      // only a direct caller meets this answer.
      if (!ud.ok() && !ud.not_supported()) {
        c.Warn(
            "F10 unmountdevice-idempotent: unmountdevice is \"ensure unmounted\": unmountdevice "
            "repeated on a dir that is no mount point: " +
            ud.verdict.error + " (a WARN: kubelet skips the call there)");
      }
      KubeletRemoveDir(n, v.global_path);
      auto d = c.ops().CallDetach(n, sim::Component::kController, spec, n.name());
      if (!d.ok() && !d.not_supported()) {
        c.Fail("F12 detach-idempotent: detach of a detached volume succeeds",
               "detach repeated: " + d.verdict.error);
      }
    }
  }
}

void Cycles(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  for (int i = 0; i < c.repeat(); ++i) {
    auto v = c.SetUp(n, spec, c.Pod("pod"));
    CheckDataRoundTrip(c, v, "cycle-" + std::to_string(i));
    TearDownAll(c);
  }
}

}  // namespace

void AddIdempotencyCases(std::vector<Case>& cases) {
  cases.push_back(
      {"idempotency/setup-verbs-repeated", {"idempotency", "root"}, {"F9"}, Always, SetUpRepeated});
  cases.push_back({"idempotency/teardown-verbs-repeated",
                   {"idempotency", "root"},
                   {"F10", "F12"},
                   Always,
                   TearDownRepeated});
  cases.push_back(
      {"idempotency/up-down-cycles", {"idempotency", "root"}, {"F9", "F26"}, Always, Cycles});
}

}  // namespace flexkit::conform
