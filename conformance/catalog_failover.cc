// [failover]: a pod's volume moves from node A to node B (flexvolume-protocol
// §7.4, anchors F14/F12, DESIGN §6.3). The case runs the simulator's own
// cluster over the case's nodes: kubelet on each node and the attach/detach
// controller on a control plane, with its Multi-Attach guard and its
// force-detach of an unhealthy node once maxWaitForUnmountDuration has
// passed on the virtual clock. The case moves pods, crashes, restarts and
// partitions nodes (the fixture does the same to their backends) and lets
// the cluster settle. What is checked: data written and fsynced on A is
// intact on B, the backend never has the volume attached to two nodes, a
// late teardown on A leaves B alone, an attach while the owner is alive is
// refused with a message, and where the move cannot happen by design the
// system stays stuck without harm. Any driver runs them: the crash is the
// simulator's (the node's namespace and everything in it killed); what the
// backend learns of it comes from the fixture's hooks where it has them.
// Without an `attachments` hook the driver's own isattached, asked for
// every node, is the witness of where the volume is attached.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "conformance/catalog.h"
#include "conformance/failover.h"
#include "simulator/cluster.h"

namespace flexkit::conform {
namespace {

using failover::Attacher;
using failover::AttacherName;
using failover::Failover;
using failover::Joined;
using failover::MessageOf;

using failover::kF12;
using failover::kF14;

// A crashes with the pod on it, the pod is force-deleted
// and recreated on B, the volume follows with its data, A comes back and
// tears down what it had without touching B.
void CrashReschedule(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto shared = Failover::Make(c, attacher, rwo_pv);
  Failover& f = *shared;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "before-crash", 3);
  f.CheckBackend(&f.a(), "after set-up on " + f.a().name());

  f.Crash(f.a());  // no unmount, unmountdevice or detach runs on A
  f.Delete(on_a);  // force-deleted
  const std::size_t before_b = f.CallCount();
  auto on_b = f.Schedule(f.b());

  if (attacher == Attacher::kController && rwo_pv) {
    // The Multi-Attach guard: no attach to B while the PV is attached to A.
    if (!f.CallsFor("attach", f.b(), before_b).empty() || f.Mounted(on_b)) {
      c.Fail(kF14, "the volume was attached to " + f.b().name() +
                       " while the controller still had it attached to " + f.a().name());
    }
  }
  if (!f.Mounted(on_b)) {
    // B waits: the guard, or a backend that refuses B while its record
    // says A has the volume (it cannot tell A died). Every refusal must
    // say why, and the volume stays with A alone.
    for (const auto& refused : f.CallsFor("attach", f.b(), before_b)) {
      if (refused.verdict.outcome != sim::Outcome::kSuccess && MessageOf(refused).empty())
        c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
    }
    f.CheckBackendWithAOrB("while the pod on " + f.b().name() + " waits for the volume");
  }
  if (!f.Mounted(on_b) && attacher == Attacher::kController) {
    // After maxWaitForUnmountDuration the controller force-detaches from
    // the unhealthy A. A backend that needs A's own agent for it (convoy's
    // daemon died with A, DESIGN §4.2) cannot: then the volume must stay
    // put, whole, attached once, with a clear error, until A returns.
    const std::size_t before_force = f.CallCount();
    auto errors = f.WaitForForceDetach();
    auto forced = f.CallsFor("detach", f.a(), before_force);
    if (forced.empty()) {
      c.Fail(kF14, "the controller did not force-detach from the dead " + f.a().name() +
                       " after maxWaitForUnmountDuration: " + Joined(errors));
    }
    if (!f.Mounted(on_b) && forced.back().verdict.outcome == sim::Outcome::kSuccess) {
      c.Fail(kF14, "the force-detach from the dead " + f.a().name() + " succeeded, but " +
                       f.b().name() + " still cannot use the volume: " + Joined(f.last_errors()));
    }
    if (!f.Mounted(on_b) && MessageOf(forced.back()).empty()) {
      c.Fail(kF14, "the force-detach from the dead " + f.a().name() +
                       " failed without a message saying why");
    }
  }
  if (!f.Mounted(on_b)) {
    f.CheckBackendWithAOrB("while the volume waits for " + f.a().name() + " to return");
    c.transcript().AddEvent("stuck, safely",
                            {{"why", "the volume stays attached to one node until " + f.a().name() +
                                         " returns: " + Joined(f.last_errors())}});
    // A comes back, its kubelet tears down the orphaned pod (and detaches,
    // when it manages attach), the controller's retried detach goes
    // through, and B gets the volume.
    f.Restart(f.a());
    f.Settle();
  }
  f.RequireMounted(on_b, kF14, "the pod recreated on " + f.b().name());
  f.CheckFiles(on_b, "F14 data-intact: data fsynced on A is intact on B");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());

  if (!f.a().running()) {
    // The controller's force-detach of A's inline attachment fails while
    // A's daemon is gone and lands late, after A is back, as kubelet's own
    // detach on A does when it manages attach.
    f.WaitForForceDetach();
    f.Restart(f.a());
    f.Settle();
    f.CheckBackend(&f.b(), "after " + f.a().name() + " came back and tore down");
    for (const auto& node : f.ControllerAttachments()) {
      if (node == f.a().name()) {
        c.Fail(kF12, "the late detach from " + f.a().name() +
                         " did not succeed: " + Joined(f.last_errors()));
      }
    }
    if (f.SetUpOn(f.a())) {
      c.Fail(kF12, f.a().name() + "'s kubelet could not tear down after the restart");
    }
  }
  f.CheckUsable(on_b, std::string(kF12) + ": B's pod keeps its volume", "after-a-returns");
  TearDownAll(c);
}

// A comes back before the pod moves; the volume stays on A and
// the pod gets it back. Then the pod moves cleanly to B: what A wrote
// without fsync must be there, because a clean teardown flushes.
void ReturnsBeforeMove(CaseContext& c, Attacher attacher) {
  auto shared = Failover::Make(c, attacher, /*rwo_pv=*/true);
  Failover& f = *shared;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "before-crash", 2);
  f.Crash(f.a());
  f.Advance(std::chrono::minutes(2));  // well before any force-detach
  f.Restart(f.a());
  // kubelet sets the pod up again (kubelet-managed attach repeats the
  // attach: it must be idempotent, protocol §7.5).
  f.Settle();
  f.RequireMounted(on_a, "remount-after-restart: a restarted node gets its pod's volume back",
                   f.a().name() + " restarted");
  f.CheckFiles(on_a, "F14 data-intact: data survives a node restart in place");
  f.CheckBackend(&f.a(), "after " + f.a().name() + " came back");

  f.WriteFiles(on_a, "unsynced", 2, /*synced=*/false);
  f.Delete(on_a);
  auto errors = f.Settle();
  if (!errors.empty()) {
    c.Fail(kF12, "the clean teardown on " + f.a().name() + " failed: " + Joined(errors));
  }
  f.CheckBackend(nullptr, "after the clean teardown on " + f.a().name());
  auto on_b = f.Place(f.b());
  f.CheckFiles(on_b,
               "F14 data-intact: unmountdevice leaves the data on the device; "
               "a clean move loses nothing");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());
  TearDownAll(c);
}

// A second pod on B asks for the volume while A is alive and
// uses it: refused with a message, A's data and mount untouched, never two
// attachments; the detach that follows the uncertain attach leaves A alone.
// Under accessMode ReadWriteMany B gets the volume too, sees what A
// fsynced, and B's teardown leaves A's volume alone.
void RefusedWhileOwnerAlive(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto shared = Failover::Make(c, attacher, rwo_pv);
  Failover& f = *shared;
  const bool many = c.profile().read_write_many;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "owner", 2);
  const std::size_t before_b = f.CallCount();
  auto on_b = f.Schedule(f.b());
  auto attaches = f.CallsFor("attach", f.b(), before_b);
  if (attaches.empty()) {
    c.Fail(kF14, "no attach to " + f.b().name() + " was tried: " + Joined(f.last_errors()));
  }
  if (many) {
    f.RequireMounted(
        on_b, kF14,
        "a second node's pod of a ReadWriteMany volume (accessMode), set up on " + f.b().name());
    f.CheckFiles(on_b, std::string(kF14) + ": data fsynced on A is seen on B (ReadWriteMany)");
    f.CheckBackendWithAOrB("with the volume on both nodes (ReadWriteMany)");
  } else {
    if (f.Mounted(on_b)) {
      c.Fail(kF14, "the volume was set up on " + f.b().name() + " while " + f.a().name() +
                       " is running with it mounted: a live attachment was taken");
    }
    if (!attaches.empty() && MessageOf(attaches.front()).empty())
      c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
    f.CheckBackend(&f.a(), "after the refused attach to " + f.b().name());
  }
  f.CheckUsable(on_a, "F14 follows-pod: the owner keeps its volume", "owner-after");

  const std::size_t before_delete = f.CallCount();
  f.Delete(on_b);
  f.Settle();
  auto detaches = f.CallsFor("detach", f.b(), before_delete);
  if (detaches.empty()) {
    c.Fail(kF12, "the uncertain attach to " + f.b().name() + " was not followed by a detach");
  }
  for (const auto& d : detaches) {
    if (d.verdict.outcome != sim::Outcome::kSuccess &&
        d.verdict.outcome != sim::Outcome::kNotSupported) {
      c.Fail(kF12,
             "detach from " + f.b().name() + (many ? ": " : " (never attached): ") + MessageOf(d));
    }
  }
  f.CheckBackend(&f.a(), "after detaching the refused attach from " + f.b().name());
  f.CheckUsable(on_a, std::string(kF12) + ": B's detach leaves A's volume alone", "owner-end");
  TearDownAll(c);
}

// A lives but is cut off: its daemon hangs and its kubelet
// cannot see the API server. The pod is recreated on B: B's attach is
// refused (A's instance runs), or the controller's force-detach through
// A's daemon times out; stuck without harm until the partition heals,
// then A tears down and the volume moves with its data. Under accessMode
// ReadWriteMany B may have the volume at once; A's teardown after the
// heal must leave B's alone.
void Partitioned(CaseContext& c, Attacher attacher) {
  auto shared = Failover::Make(c, attacher, /*rwo_pv=*/true);
  Failover& f = *shared;
  const bool many = c.profile().read_write_many;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "before-partition", 2);
  f.Partition(f.a(), true);
  f.Delete(on_a);
  // One round per step: every call through A's hung daemon costs the
  // driver's whole request timeout.
  const std::size_t before_b = f.CallCount();
  auto on_b = f.Schedule(f.b(), /*rounds=*/1);
  if (attacher == Attacher::kKubelet) {
    auto attaches = f.CallsFor("attach", f.b(), before_b);
    if (f.Mounted(on_b) && !many) {
      c.Fail(kF14, "the volume was set up on " + f.b().name() + " while " + f.a().name() +
                       " is alive (only cut off)");
    }
    if ((!many || !f.Mounted(on_b)) && (attaches.empty() || MessageOf(attaches.front()).empty()))
      c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
  } else {
    const std::size_t before_force = f.CallCount();
    f.WaitForForceDetach(/*rounds=*/1);  // A is unhealthy: partitioned
    auto forced = f.CallsFor("detach", f.a(), before_force);
    if (f.Mounted(on_b) && !many) {
      c.Fail(kF14, "the volume moved to " + f.b().name() + " through a force-detach from " +
                       f.a().name() +
                       ", whose daemon is unreachable while it has the volume mounted");
    }
    if ((!many || !f.Mounted(on_b)) && (forced.empty() || MessageOf(forced.back()).empty()))
      c.Fail(kF14, "the failed force-detach from " + f.a().name() + " gives no message");
  }
  if (many) {
    f.CheckBackendWithAOrB("during the partition (ReadWriteMany)");
  } else {
    f.CheckBackend(&f.a(), "during the partition");
  }
  f.CheckFiles(on_a, "F14 data-intact: the partitioned owner's data is untouched");

  f.Partition(f.a(), false);  // A's kubelet syncs: the pod is gone
  f.Settle();
  f.RequireMounted(on_b, kF14, "after the partition healed");
  f.CheckFiles(on_b, "F14 data-intact: data fsynced on A is intact on B");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());
  TearDownAll(c);
}

// Mount-only (attach:false): A crashes with the pod mounted, the pod is
// recreated on B and mounted there, and B writes. When A returns, its
// kubelet tears down what it reconstructs (unmount of the stale pod dir):
// B's mount, and every file B sees in the volume (A's too, on shared
// storage), must be untouched, and B's pod must still write and read.
void MountOnlyCrashReschedule(CaseContext& c) {
  auto shared = Failover::Make(c, Attacher::kController, /*rwo_pv=*/false);
  Failover& f = *shared;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "on-a", 2);
  f.Crash(f.a());
  f.Delete(on_a);
  auto on_b = f.Place(f.b());
  f.WriteFiles(on_b, "on-b", 2);
  const auto seen = f.Files(on_b);
  f.Restart(f.a());
  auto errors = f.Settle();
  if (f.SetUpOn(f.a())) {
    c.Fail(kF12, f.a().name() + "'s kubelet could not tear down the pod it had before the crash: " +
                     Joined(errors));
  }
  const std::string rule =
      "F14 returning-node-harmless: the returning node's teardown leaves the new node's volume "
      "alone";
  if (!f.Mounted(on_b)) {
    c.Fail(rule, "after " + f.a().name() + " returned and tore down, the pod on " + f.b().name() +
                     " no longer has its volume mounted");
  }
  const auto now = f.Files(on_b);
  for (const auto& [name, sum] : seen) {
    auto it = now.find(name);
    if (it == now.end())
      c.Fail(rule, "after " + f.a().name() + " returned and tore down, " + name +
                       " is gone from the volume on " + f.b().name());
    if (it->second != sum)
      c.Fail(rule, "after " + f.a().name() + " returned and tore down, " + name + " changed on " +
                       f.b().name());
  }
  auto more = f.WriteFiles(on_b, "after-a-returns", 1);
  f.CheckFiles(on_b, rule, more);
  TearDownAll(c);
}

// What the profile's `storage` says data does when the pod moves: on
// shared storage what A wrote and fsynced is on B; on ephemeral storage B
// starts empty.
void MountOnlyDataFollowsPod(CaseContext& c) {
  auto shared = Failover::Make(c, Attacher::kController, /*rwo_pv=*/false);
  Failover& f = *shared;
  auto on_a = f.Place(f.a());
  auto written = f.WriteFiles(on_a, "on-a", 3);
  f.Crash(f.a());
  f.Delete(on_a);
  auto on_b = f.Place(f.b());
  if (c.profile().storage == "shared") {
    f.CheckFiles(on_b, "F14 data-intact: storage: shared: data written and fsynced on A is on B",
                 written);
  } else {
    for (const auto& [name, sum] : f.Files(on_b)) {
      if (written.count(name))
        c.Fail("storage-ephemeral: with storage: ephemeral every mount starts empty",
               name + ", written on " + f.a().name() + ", is in the new volume on " + f.b().name());
    }
  }
  TearDownAll(c);
}

std::string StorageSays(const DriverProfile& p) {
  if (std::string why = MountOnly(p); !why.empty()) return why;
  if (p.storage.empty())
    return "profile: no `storage` key (shared, node-local or ephemeral) says what the data does "
           "across nodes";
  if (p.storage == "node-local")
    return "profile: storage: node-local (the data stays on its node; nothing to check across "
           "nodes)";
  return "";
}

// The partition cases cut A off its backend: only a fixture that can.
std::string AttachableAndPartitionable(const DriverProfile& p) {
  if (std::string why = AttachableOnly(p); !why.empty()) return why;
  return Partitionable(p);
}

}  // namespace

void AddFailoverCases(std::vector<Case>& cases) {
  const std::size_t first = cases.size();
  const std::vector<std::string> tags = {"failover", "root", "slow"};
  // The controller's force-detach goes through the dead or cut-off node's
  // backend: its calls wait out the driver's timeouts.
  auto tags_for = [&tags](Attacher attacher) {
    auto t = tags;
    if (attacher == Attacher::kController) t.push_back("waits");
    return t;
  };
  for (Attacher attacher : {Attacher::kController, Attacher::kKubelet}) {
    const std::string who = AttacherName(attacher);
    for (bool rwo_pv : {true, false}) {
      cases.push_back(
          {"failover/crash-reschedule-" + who + (rwo_pv ? "-rwo-pv" : "-inline"),
           tags_for(attacher),
           {"F14", "F12"},
           AttachableOnly,
           [attacher, rwo_pv](CaseContext& c) { CrashReschedule(c, attacher, rwo_pv); }});
    }
  }
  for (Attacher attacher : {Attacher::kController, Attacher::kKubelet}) {
    cases.push_back({"failover/node-returns-before-move-" + AttacherName(attacher),
                     tags,
                     {"F14", "F12"},
                     AttachableOnly,
                     [attacher](CaseContext& c) { ReturnsBeforeMove(c, attacher); }});
  }
  // The controller only asks B while A holds the volume for multi-attachable
  // volumes (inline); kubelet-managed attach asks for any.
  cases.push_back(
      {"failover/attach-refused-while-owner-alive-controller-inline",
       tags,
       {"F14"},
       AttachableOnly,
       [](CaseContext& c) { RefusedWhileOwnerAlive(c, Attacher::kController, false); }});
  cases.push_back({"failover/attach-refused-while-owner-alive-kubelet-rwo-pv",
                   tags,
                   {"F14"},
                   AttachableOnly,
                   [](CaseContext& c) { RefusedWhileOwnerAlive(c, Attacher::kKubelet, true); }});
  for (Attacher attacher : {Attacher::kController, Attacher::kKubelet}) {
    cases.push_back({"failover/partition-daemon-unreachable-" + AttacherName(attacher),
                     tags_for(attacher),
                     {"F14"},
                     AttachableAndPartitionable,
                     [attacher](CaseContext& c) { Partitioned(c, attacher); }});
  }
  cases.push_back({"failover/mount-only-crash-reschedule",
                   tags,
                   {"F14", "F12"},
                   MountOnly,
                   MountOnlyCrashReschedule});
  cases.push_back({"failover/mount-only-data-follows-pod",
                   tags,
                   {"F14"},
                   StorageSays,
                   MountOnlyDataFollowsPod});
  // Every failover moves a pod from one node to another.
  for (std::size_t i = first; i < cases.size(); ++i) cases[i].nodes = 2;
}

}  // namespace flexkit::conform
