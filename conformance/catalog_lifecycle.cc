// [lifecycle]: a volume set up and torn down the way kubelet does it, with
// data written and read back through the pod directory. Attachable drivers:
// attach, waitforattach, isattached, mountdevice, mount, then unmount,
// unmountdevice, detach, isattached. Mount-only drivers: mount, unmount.
#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

void MountOnlyLifecycle(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  if (!c.PodVolumeSetUp(n, v.pod_dir)) {
    c.Fail("mount-succeeds: mount mounts the pod dir",
           "mount said Success but " + v.pod_dir + " is not a mount point");
  }
  CheckDataRoundTrip(c, v);
  c.tracker().RunNow(v.pod_undo);
  TearDownAll(c);
}

void AttachableLifecycle(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  auto is = c.ops().CallIsAttached(n, sim::Component::kController, spec, n.name());
  if (is.ok() && !is.verdict.status->attached) {
    c.Fail("F28 isattached-honest: isattached reports an attached volume",
           "isattached said attached:false after attach");
  }
  if (!n.filesystem().IsMountPoint(v.global_path)) {
    c.Fail("F19 mountdevice-mounts: mountdevice mounts the device path",
           v.global_path + " is not a mount point");
  }
  CheckDataRoundTrip(c, v);
  c.tracker().RunNow(v.pod_undo);
  TearDownAll(c);
  auto after = c.ops().CallIsAttached(n, sim::Component::kController, spec, n.name());
  // The controller asks isattached only of volumes it believes attached
  // (§5.5): after a detach it never asks, so this is only recorded.
  if (after.ok() && after.verdict.status->attached) {
    c.Warn("isattached says attached:true after detach (the controller never asks then)");
  }
}

// Data survives unmount and a second mount of the same volume.
void DataPersists(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v, "persist.txt");
  TearDownAll(c);
  auto again = c.SetUp(n, spec, c.Pod("pod"));
  std::string back;
  try {
    back = n.filesystem().ReadFile(again.pod_dir + "/persist.txt");
  } catch (const std::exception& e) {
    c.Fail("data-kept: an attachable volume keeps its data across mounts",
           std::string("read after remount: ") + e.what());
  }
  if (back != "flexconform " + spec.name + "\n") {
    c.Fail("data-kept: an attachable volume keeps its data across mounts",
           "read back '" + back + "' after remount");
  }
  TearDownAll(c);
}

}  // namespace

void AddLifecycleCases(std::vector<Case>& cases) {
  cases.push_back({"lifecycle/mount-only",
                   {"lifecycle", "root"},
                   {"F11", "F26"},
                   MountOnly,
                   MountOnlyLifecycle});
  cases.push_back({"lifecycle/attachable",
                   {"lifecycle", "root"},
                   {"F11", "F13", "F26", "F28", "F29"},
                   AttachableOnly,
                   AttachableLifecycle});
  cases.push_back({"lifecycle/data-persists-across-remount",
                   {"lifecycle", "root"},
                   {"F19"},
                   AttachableOnly,
                   DataPersists});
}

}  // namespace flexkit::conform
