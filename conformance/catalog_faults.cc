// [faults]: a backend that cannot answer or answers late.
// F28: the controller reads isattached to decide what is attached where: a
// driver that answers Success + attached:false when it could not ask its
// backend makes the controller believe a volume is free that is not
// (kubernetes attacher.go VolumesAreAttached). Such an error must be a
// Failure, which kubelet and the controller treat as "unknown" and retry.
// F15: a pod deleted while its mountdevice still runs.
#include <sys/mount.h>

#include <future>

#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

std::string AttachableWithNodeBackends(const DriverProfile& p) {
  if (!p.attachable()) return "capability: init says attach:false";
  return Partitionable(p);
}

void IsAttachedWithBackendDown(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  c.transcript().AddEvent("backend unreachable", {{"node", n.name()}});
  c.fixture().SetBackendReachable(n, false);
  auto is = c.ops().CallIsAttached(n, sim::Component::kController, spec, n.name());
  c.fixture().SetBackendReachable(n, true);
  c.transcript().AddEvent("backend reachable", {{"node", n.name()}});
  if (is.ok() && is.verdict.status && !is.verdict.status->attached) {
    c.Fail("F28 isattached-honest: isattached must not hide a backend error",
           "with the backend unreachable, isattached answered Success with attached:false for a "
           "volume that is attached; it must answer Failure");
  }
  TearDownAll(c);
}

// F15: the pod is deleted while its mountdevice is still running, held up
// by a slow backend. kubelet runs one operation per volume at a time and
// reports the volume in use from before mountdevice, so neither
// unmountdevice nor the controller's detach may start until mountdevice
// returns (kubernetes attachable-with-long-mount). The case holds the
// call in flight (the node's daemon hangs), checks that the volume stays
// attached meanwhile, lets the call finish, and tears down as kubelet then
// does: the late mountdevice must have succeeded, and unmountdevice and
// detach must leave nothing mounted or attached.
void PodDeletedDuringLongMountDevice(CaseContext& c) {
  constexpr const char* kF15 =
      "F15 detach-during-mountdevice: a pod deleted during a long mountdevice is torn down once it "
      "returns";
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  const PodVolume attached = c.AttachDevice(n, spec);
  const std::string device = attached.device;
  const std::string global = attached.global_path;
  c.tracker().Push("unmountdevice " + global,
                   [&c, &n, spec, global] { c.UnmountDevice(n, spec, global); });

  c.fixture().SetBackendReachable(n, false);
  c.transcript().AddEvent("backend hangs; mountdevice starts", {{"node", n.name()}});
  auto in_flight = std::async(
      std::launch::async, [&c, &n, spec, device] { return c.ops().MountDevice(n, spec, device); });
  const bool held = in_flight.wait_for(std::chrono::seconds(1)) == std::future_status::timeout;
  c.transcript().AddEvent("pod deleted while mountdevice runs",
                          {{"node", n.name()}, {"mountdevice_still_running", held}});
  // In use: no detach may come, and nothing may have moved the volume.
  std::string still_attached;
  if (auto attachments = c.fixture().Attachments()) {
    for (const auto& [volume, nodes] : *attachments) {
      if (nodes.size() != 1 || nodes.front() != n.name()) still_attached = volume;
    }
  }
  c.fixture().SetBackendReachable(n, true);
  c.transcript().AddEvent("backend answers again", {{"node", n.name()}});
  auto md = in_flight.get();
  if (!still_attached.empty()) {
    c.Fail(kF15, "while mountdevice was running, backend volume " + still_attached +
                     " was no longer attached to " + n.name() + " alone");
  }
  if (!md.ok()) {
    c.Fail(kF15, "the mountdevice held up by a slow backend failed: " + md.error);
  }
  if (!n.filesystem().IsMountPoint(global))
    c.Fail(kF15, "mountdevice answered Success but " + global + " is not a mount point");

  // kubelet's teardown, now that the operation has returned.
  c.UnmountDevice(n, spec, global);
  c.Detach(n, spec);
  if (auto attachments = c.fixture().Attachments()) {
    for (const auto& [volume, nodes] : *attachments) {
      if (!nodes.empty())
        c.Fail(kF15, "backend volume " + volume + " is still attached after the detach");
    }
  }
  TearDownAll(c);
}

}  // namespace

void AddFaultCases(std::vector<Case>& cases) {
  cases.push_back({"faults/isattached-with-backend-unreachable",
                   {"faults", "root", "slow", "waits"},
                   {"F28", "F30"},
                   AttachableWithNodeBackends,
                   IsAttachedWithBackendDown});
  cases.push_back({"faults/pod-deleted-during-long-mountdevice",
                   {"faults", "root"},
                   {"F15"},
                   AttachableWithNodeBackends,
                   PodDeletedDuringLongMountDevice});
}

}  // namespace flexkit::conform
