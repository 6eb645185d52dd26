// [failover]: a pod's volume moves from node A to node B (flexvolume-protocol
// §7.4, anchors F14/F12, DESIGN §6.3). The case plays kubelet on each node
// and the attach/detach controller, whose decisions it scripts from §7.4:
// the Multi-Attach guard (no attach on B while an RWO-only PV is attached
// to A; inline volumes are exempt) and the force-detach of an unhealthy node
// once maxWaitForUnmountDuration has passed on a virtual clock. The fixture
// crashes, restarts and partitions the nodes' backends. What is checked:
// data written and fsynced on A is intact on B, the backend never has the
// volume attached to two nodes, a late teardown on A leaves B alone, an
// attach while the owner is alive is refused with a message, and where the
// move cannot happen by design the system stays stuck without harm.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>

#include "conformance/catalog.h"
#include "simulator/controller.h"
#include "simulator/virtual_clock.h"

namespace flexkit::conform {
namespace {

constexpr const char* kF14 = "F14 (protocol §7.4, DESIGN §6.3: a volume follows its pod safely)";
constexpr const char* kF12 =
    "F12 (protocol §7.5: a late detach succeeds and touches only its node)";

enum class Attacher { kController, kKubelet };

std::string AttacherName(Attacher a) {
  return a == Attacher::kController ? "controller" : "kubelet";
}

// FNV-1a: a checksum to report and compare, not a security property.
std::uint64_t Checksum(const std::string& data) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : data) h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::string Message(const sim::CallResult& r) {
  if (!r.harness_problem.empty()) return r.harness_problem;
  if (r.verdict.status && !r.verdict.status->message.empty()) return r.verdict.status->message;
  return r.verdict.error;
}

// The volume as one node's kubelet has it; the tracker's undos look at the
// flags, so a step the case already did is not undone twice.
struct Placement {
  sim::Node* node = nullptr;
  sim::MountExtras pod;
  std::string device;
  std::string global_path;
  std::string pod_dir;
  bool attached = false;  // an attach succeeded and no detach since
};

// Shared: the tracker's undos keep it alive after the case function ends
// (the runner unwinds them after a FAIL, when the case's stack is gone).
class Failover : public std::enable_shared_from_this<Failover> {
 public:
  static std::shared_ptr<Failover> Make(CaseContext& c, Attacher attacher, bool rwo_pv) {
    return std::make_shared<Failover>(c, attacher, rwo_pv);
  }
  Failover(CaseContext& c, Attacher attacher, bool rwo_pv)
      : c_(c), attacher_(attacher), a_(c.node(0)), b_(SecondNode(c)) {
    if (!c.fixture().HasNodeBackends()) {
      c.Skip(
          "profile: the fixture has no per-node backend to crash, restart or partition "
          "(fixture: convoy-fake has)");
    }
    spec_ = c.Volume(c.Unique("vol"));
    spec_.inline_volume = !rwo_pv;
    spec_.read_write_once_only = rwo_pv;
  }

  sim::Node& a() { return a_; }
  sim::Node& b() { return b_; }

  // Where the controller's driver calls run: B stands in for the control
  // plane (A is the node that fails), reaching A's backend by A's name.
  sim::Node& ControlPlane() { return b_; }

  std::shared_ptr<Placement> NewPlacement(sim::Node& n) {
    auto p = std::make_shared<Placement>();
    p->node = &n;
    auto paths = c_.Paths(n);
    p->global_path = paths.DeviceMountPath(spec_.name);
    p->pod = c_.Pod("pod");
    p->pod_dir = paths.PodVolumeDir(p->pod.pod_uid, spec_.name);
    // Whatever the case leaves set up is torn down after it, as kubelet would.
    c_.tracker().Push("detach " + spec_.name + " from " + n.name(), [self = shared_from_this(), p] {
      // kubelet's device-open check: no detach while the device is mounted.
      if (p->attached && p->node->running() && !p->node->mounter().IsMountPoint(p->global_path)) {
        auto r = self->Detach(*p);
        if (!r.ok() && !r.not_supported()) throw std::runtime_error("detach: " + Message(r));
      }
    });
    c_.tracker().Push("tear down " + spec_.name + " on " + n.name(),
                      [self = shared_from_this(), p] {
                        if (p->node->running()) self->TearDown(*p);
                      });
    return p;
  }

  sim::CallResult Attach(Placement& p) {
    const bool by_controller = attacher_ == Attacher::kController;
    auto r = c_.Call(by_controller ? ControlPlane() : *p.node,
                     c_.argv().Attach(Json(), p.node->name()), AttacherName(attacher_));
    if (r.ok()) {
      p.attached = true;
      p.device = r.verdict.status ? r.verdict.status->device : "";
    }
    return r;
  }

  sim::CallResult Detach(Placement& p) {
    const bool by_controller = attacher_ == Attacher::kController;
    auto r = c_.Call(by_controller ? ControlPlane() : *p.node,
                     c_.argv().Detach(spec_.name, p.node->name()), AttacherName(attacher_));
    if (r.ok() || r.not_supported()) p.attached = false;
    return r;
  }

  // kubelet after the attach: waitforattach, mountdevice (unless the
  // global path is already a mount point), mount or the bind fallback.
  void MountOn(Placement& p) {
    sim::Node& n = *p.node;
    auto waited = c_.Require(n, c_.argv().WaitForAttach(p.device, Json()),
                             "protocol §7.1: waitforattach returns the device");
    if (waited.verdict.status && !waited.verdict.status->device.empty())
      p.device = waited.verdict.status->device;
    n.mounter().MakeDirs(p.global_path, 0750);
    if (!n.mounter().IsMountPoint(p.global_path)) {
      auto md = c_.Call(n, c_.argv().MountDevice(p.global_path, p.device, Json()));
      if (md.not_supported()) {
        n.mounter().FormatAndMount(p.device, p.global_path,
                                   spec_.fs_type.empty() ? "ext4" : spec_.fs_type, false);
      } else if (!md.ok()) {
        c_.Fail("protocol §7.1: mountdevice mounts the device on " + n.name(),
                "mountdevice failed: " + Message(md));
      }
    }
    n.mounter().MakeDirs(p.pod_dir, 0750);
    if (n.mounter().IsMountPoint(p.pod_dir)) return;
    auto m = c_.Call(n, c_.argv().Mount(p.pod_dir, c_.Json(spec_, &p.pod), p.device));
    if (m.not_supported()) {
      n.mounter().Mount(p.global_path, p.pod_dir, "", MS_BIND, "");
    } else if (!m.ok()) {
      c_.Fail("protocol §7.1: mount succeeds on " + n.name(), "mount failed: " + Message(m));
    }
  }

  // A full kubelet set-up on `n` whose attach must succeed.
  std::shared_ptr<Placement> SetUpOn(sim::Node& n) {
    auto p = NewPlacement(n);
    auto r = Attach(*p);
    if (!r.ok()) {
      c_.Fail(kF14, "attach " + spec_.name + " to " + n.name() + " failed: " + Message(r));
    }
    MountOn(*p);
    return p;
  }

  // kubelet's teardown once no pod needs the volume (also what a restarted
  // kubelet does for what it reconstructs): unmount the pod dir if it
  // exists, rmdir; unmountdevice if the global path is a mount point.
  void TearDown(Placement& p) {
    sim::Node& n = *p.node;
    if (n.mounter().PathExists(p.pod_dir)) {
      auto r = c_.Call(n, c_.argv().Unmount(p.pod_dir));
      if (r.not_supported()) {
        if (n.mounter().IsMountPoint(p.pod_dir)) n.mounter().Unmount(p.pod_dir);
      } else if (!r.ok()) {
        c_.Fail("F10 (protocol §7.1 step 11, §7.4 step 5: kubelet's unmount succeeds)",
                "unmount " + p.pod_dir + " on " + n.name() + ": " + Message(r));
      }
      n.mounter().RemoveDir(p.pod_dir);
    }
    if (n.mounter().PathExists(p.global_path)) {
      if (n.mounter().IsMountPoint(p.global_path)) {
        auto r = c_.Call(n, c_.argv().UnmountDevice(p.global_path));
        if (r.not_supported()) {
          n.mounter().Unmount(p.global_path);
        } else if (!r.ok()) {
          c_.Fail("F10 (protocol §7.1 step 12, §7.4 step 5: kubelet's unmountdevice succeeds)",
                  "unmountdevice " + p.global_path + " on " + n.name() + ": " + Message(r));
        }
        if (n.mounter().IsMountPoint(p.global_path)) {
          c_.Fail("F11 (protocol §7: unmountdevice leaves nothing mounted)",
                  p.global_path + " on " + n.name() + " is still mounted after unmountdevice");
        }
      }
      n.mounter().RemoveDir(p.global_path);
    }
  }

  // The pod writes `count` files through the volume on p's node; each is
  // fsynced unless `synced` is false (then only a clean unmount saves it).
  void WriteFiles(const Placement& p, const std::string& stem, int count, bool synced = true) {
    for (int i = 0; i < count; ++i) {
      const std::string name = stem + "-" + std::to_string(i) + ".bin";
      std::string data;
      std::uint64_t x = Checksum(spec_.name + name);
      data.reserve(64 * 1024);
      while (data.size() < 64 * 1024) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        data.push_back(static_cast<char>(x >> 56));
      }
      const std::string path = p.pod_dir + "/" + name;
      try {
        if (synced) {
          p.node->mounter().WriteFile(path, data);
        } else {
          WriteUnsynced(*p.node, path, data);
        }
      } catch (const std::exception& e) {
        c_.Fail("protocol §7: a mounted volume is writable", std::string("write: ") + e.what());
      }
      checksums_[name] = Checksum(data);
    }
  }

  // Every file written so far reads back with its checksum on p's node.
  void CheckFiles(const Placement& p, const std::string& rule) {
    for (const auto& [name, sum] : checksums_) {
      std::string data;
      try {
        data = p.node->mounter().ReadFile(p.pod_dir + "/" + name);
      } catch (const std::exception& e) {
        c_.Fail(rule, "on " + p.node->name() + ": " + e.what());
      }
      if (Checksum(data) != sum) {
        c_.Fail(rule, "on " + p.node->name() + ": " + name + " has checksum " +
                          Hex(Checksum(data)) + " (" + std::to_string(data.size()) +
                          " bytes), written with " + Hex(sum));
      }
    }
  }

  // The pod on p's node can still write and read back, and its pod dir is
  // still a mount point.
  void CheckUsable(const Placement& p, const std::string& rule, const std::string& stem) {
    if (!p.node->mounter().IsMountPoint(p.pod_dir)) {
      c_.Fail(rule, p.pod_dir + " on " + p.node->name() + " is no longer a mount point");
    }
    CheckFiles(p, rule);
    WriteFiles(p, stem, 1);
    CheckFiles(p, rule);
  }

  // The backend has every volume attached to `node` only (or nowhere when
  // `node` is null), and never had one attached twice.
  void CheckBackend(const sim::Node* node, const std::string& when) {
    auto doubles = c_.fixture().DoubleAttachments();
    if (!doubles.empty()) {
      c_.Fail(kF14, when + ": the backend had a volume attached to two nodes: " + doubles.front());
    }
    auto attachments = c_.fixture().Attachments();
    if (!attachments) return;
    for (const auto& [volume, nodes] : *attachments) {
      const bool right =
          node ? (nodes.size() == 1 && nodes.front() == node->name()) : nodes.empty();
      if (!right) {
        std::string where;
        for (const auto& n : nodes) where += (where.empty() ? "" : ", ") + n;
        c_.Fail(kF14, when + ": backend volume " + volume + " is attached to [" + where +
                          "], expected " + (node ? "[" + node->name() + "]" : "nothing"));
      }
    }
  }

  // Node events go into the transcript, so a failure's calls read in order.
  void Crash(sim::Node& n) {
    n.Crash();
    c_.fixture().NodeCrashed(n);
    c_.transcript().AddEvent("node crashed: processes killed, mounts gone, instance stopped",
                             {{"node", n.name()}});
  }
  void Restart(sim::Node& n) {
    n.Restart();
    c_.fixture().NodeRestarted(n);
    c_.transcript().AddEvent("node restarted: new namespace, instance and daemon running",
                             {{"node", n.name()}});
  }
  void Partition(sim::Node& n, bool cut) {
    n.SetPartitioned(cut);
    c_.fixture().SetBackendReachable(n, !cut);
    c_.transcript().AddEvent(cut ? "node partitioned: its daemon is unreachable"
                                 : "partition healed: its daemon answers again",
                             {{"node", n.name()}});
  }

  // The controller's view of time: A unhealthy and still listed, the
  // force-detach comes after maxWaitForUnmountDuration.
  void WaitForForceDetach() { Wait(sim::ControllerSettings{}.max_wait_for_unmount); }
  void Wait(sim::Clock::Duration d) {
    clock_.Advance(d);
    c_.transcript().AddEvent("virtual time passes",
                             {{"advanced_ms", d.count()}, {"now_ms", clock_.Now().count()}});
  }

  std::string Json() const { return c_.Json(spec_); }

 private:
  static sim::Node& SecondNode(CaseContext& c) {
    if (c.node_count() < 2) {
      c.Skip("profile: a failover needs two nodes (nodes: 2); the profile has " +
             std::to_string(c.node_count()));
    }
    return c.node(1);
  }

  static std::string Hex(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
  }

  static void WriteUnsynced(sim::Node& n, const std::string& path, const std::string& data) {
    const std::string real = "/proc/" + std::to_string(n.holder_pid()) + "/root" + path;
    int fd = ::open(real.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("open " + path + " on " + n.name());
    const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    ::close(fd);
    if (!ok) throw std::runtime_error("write " + path + " on " + n.name());
  }

  CaseContext& c_;
  Attacher attacher_;
  sim::Node& a_;
  sim::Node& b_;
  sim::VolumeSpec spec_;
  std::map<std::string, std::uint64_t> checksums_;
  sim::VirtualClock clock_;
};

// 1-5 of issue 7: A crashes with the pod on it, the pod is force-deleted
// and recreated on B, the volume follows with its data, A comes back and
// tears down what it had without touching B.
void CrashReschedule(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto shared = Failover::Make(c, attacher, rwo_pv);
  Failover& f = *shared;
  auto on_a = f.SetUpOn(f.a());
  f.WriteFiles(*on_a, "before-crash", 3);
  f.CheckBackend(&f.a(), "after set-up on " + f.a().name());

  f.Crash(f.a());  // no unmount, unmountdevice or detach runs on A
  auto on_b = f.NewPlacement(f.b());

  if (attacher == Attacher::kController && rwo_pv) {
    // Multi-Attach guard: no attach on B while the PV is attached to A.
    // After maxWaitForUnmountDuration the controller force-detaches from
    // the unhealthy A, through A's daemon, which died with A: by design
    // (DESIGN §4.2) that detach cannot succeed, so the volume must stay
    // put, whole, attached once, with a clear error, until A returns.
    f.WaitForForceDetach();
    auto forced = f.Detach(*on_a);
    if (forced.ok()) {
      // A driver that can detach a dead node's volume moves on at once.
      f.CheckBackend(nullptr, "after the force-detach from " + f.a().name());
    } else {
      if (Message(forced).empty()) {
        c.Fail(kF14, "the force-detach from the dead " + f.a().name() +
                         " failed without a message saying why");
      }
      f.CheckBackend(&f.a(), "while the force-detach from the dead " + f.a().name() + " fails");
      // Stuck safely; A comes back, its kubelet tears down the orphaned
      // pod, and the controller's retried detach goes through.
      f.Restart(f.a());
      f.TearDown(*on_a);
      auto retried = f.Detach(*on_a);
      if (!retried.ok()) {
        c.Fail(kF12, "detach from " + f.a().name() + " after it came back: " + Message(retried));
      }
      f.CheckBackend(nullptr, "after the retried detach from " + f.a().name());
    }
    auto attached = f.Attach(*on_b);
    if (!attached.ok()) {
      c.Fail(kF14, "attach to " + f.b().name() + " after the detach from " + f.a().name() + ": " +
                       Message(attached));
    }
  } else {
    // kubelet-managed attach, or an inline volume (multi-attachable): B's
    // attach comes while A still holds the volume; A's instance is down,
    // so the backend takes the volume over (DESIGN §6.3).
    auto attached = f.Attach(*on_b);
    if (!attached.ok()) {
      c.Fail(kF14, "attach to " + f.b().name() + " while the crashed " + f.a().name() +
                       " still holds the volume: " + Message(attached));
    }
  }
  f.MountOn(*on_b);
  f.CheckFiles(*on_b, std::string(kF14) + ": data fsynced on A is intact on B");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());

  if (!f.a().running()) {
    if (attacher == Attacher::kController && on_a->attached) {
      // The controller's force-detach from the dead A; while A's daemon is
      // gone it fails and is retried, landing late, after A is back.
      f.WaitForForceDetach();
      auto forced = f.Detach(*on_a);
      if (forced.ok())
        f.CheckBackend(&f.b(), "after the force-detach from the dead " + f.a().name());
    }
    f.Restart(f.a());
    f.TearDown(*on_a);  // reconstruction: the pod is gone
    if (on_a->attached) {
      auto late = f.Detach(*on_a);  // kubelet-managed, or the controller's retry
      if (!late.ok()) c.Fail(kF12, "late detach from " + f.a().name() + ": " + Message(late));
    }
    f.CheckBackend(&f.b(), "after " + f.a().name() + " came back and tore down");
  }
  f.CheckUsable(*on_b, std::string(kF12) + ": B's pod keeps its volume", "after-a-returns");
  TearDownAll(c);
}

// Issue 7.6a: A comes back before the pod moves; the volume stays on A and
// the pod gets it back. Then the pod moves cleanly to B: what A wrote
// without fsync must be there, because a clean teardown flushes.
void ReturnsBeforeMove(CaseContext& c, Attacher attacher) {
  auto shared = Failover::Make(c, attacher, /*rwo_pv=*/true);
  Failover& f = *shared;
  auto on_a = f.SetUpOn(f.a());
  f.WriteFiles(*on_a, "before-crash", 2);
  f.Crash(f.a());
  f.Wait(std::chrono::minutes(2));  // well before the force-detach
  f.Restart(f.a());
  // Reconstruction: the pod still exists, so kubelet sets it up again
  // (kubelet-managed attach repeats the attach; it must be idempotent).
  if (attacher == Attacher::kKubelet) {
    auto again = f.Attach(*on_a);
    if (!again.ok()) {
      c.Fail("protocol §7.5: attach repeated on the same node succeeds",
             "attach to the returned " + f.a().name() + ": " + Message(again));
    }
  }
  f.MountOn(*on_a);
  f.CheckFiles(*on_a, std::string(kF14) + ": data survives a node restart in place");
  f.CheckBackend(&f.a(), "after " + f.a().name() + " came back");

  f.WriteFiles(*on_a, "unsynced", 2, /*synced=*/false);
  f.TearDown(*on_a);
  auto detached = f.Detach(*on_a);
  if (!detached.ok()) c.Fail(kF12, "detach from " + f.a().name() + ": " + Message(detached));
  f.CheckBackend(nullptr, "after the clean teardown on " + f.a().name());
  auto on_b = f.SetUpOn(f.b());
  f.CheckFiles(*on_b,
               "F14 (protocol §7.1 step 12: unmountdevice leaves the data on the device; "
               "a clean move loses nothing)");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());
  TearDownAll(c);
}

// Issue 7.6b: B asks for the volume while A is alive and uses it: refused
// with a message, A's data and mount untouched, never two attachments.
void RefusedWhileOwnerAlive(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto shared = Failover::Make(c, attacher, rwo_pv);
  Failover& f = *shared;
  auto on_a = f.SetUpOn(f.a());
  f.WriteFiles(*on_a, "owner", 2);
  auto on_b = f.NewPlacement(f.b());
  auto r = f.Attach(*on_b);
  if (r.ok()) {
    c.Fail(kF14, "attach to " + f.b().name() + " succeeded while " + f.a().name() +
                     " is running with the volume mounted: a live attachment was taken");
  }
  if (Message(r).empty())
    c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
  f.CheckBackend(&f.a(), "after the refused attach to " + f.b().name());
  f.CheckUsable(*on_a, std::string(kF14) + ": the owner keeps its volume", "owner-after");
  // The attach was uncertain, so its detach follows (protocol §7.5); it
  // must leave A's attachment alone.
  on_b->attached = true;
  auto d = f.Detach(*on_b);
  if (!d.ok()) c.Fail(kF12, "detach from " + f.b().name() + " (never attached): " + Message(d));
  f.CheckBackend(&f.a(), "after detaching the refused attach from " + f.b().name());
  f.CheckUsable(*on_a, std::string(kF12) + ": B's detach leaves A's volume alone", "owner-end");
  TearDownAll(c);
}

// Issue 7.6c: A lives but its daemon is unreachable. The pod is recreated
// on B: B's attach is refused (A's instance runs), or the controller's
// force-detach through A's daemon fails; stuck without harm until the
// partition heals, then A tears down and the volume moves with its data.
void Partitioned(CaseContext& c, Attacher attacher) {
  auto shared = Failover::Make(c, attacher, /*rwo_pv=*/true);
  Failover& f = *shared;
  auto on_a = f.SetUpOn(f.a());
  f.WriteFiles(*on_a, "before-partition", 2);
  f.Partition(f.a(), true);
  auto on_b = f.NewPlacement(f.b());
  if (attacher == Attacher::kKubelet) {
    auto r = f.Attach(*on_b);
    if (r.ok()) {
      c.Fail(kF14, "attach to " + f.b().name() + " succeeded while " + f.a().name() +
                       " is alive (only its daemon is unreachable)");
    }
    if (Message(r).empty()) c.Fail(kF14, "the refused attach gives no message saying why");
  } else {
    f.WaitForForceDetach();  // A is unhealthy: unreachable
    auto forced = f.Detach(*on_a);
    if (forced.ok()) {
      c.Fail(kF14, "force-detach from " + f.a().name() +
                       " succeeded through an unreachable "
                       "daemon while " +
                       f.a().name() + " still has the volume mounted");
    }
    if (Message(forced).empty()) c.Fail(kF14, "the failed force-detach gives no message");
  }
  f.CheckBackend(&f.a(), "during the partition");
  f.CheckFiles(*on_a, std::string(kF14) + ": the partitioned owner's data is untouched");

  f.Partition(f.a(), false);
  f.TearDown(*on_a);  // A's kubelet: the pod was deleted
  auto detached = f.Detach(*on_a);
  if (!detached.ok())
    c.Fail(kF12, "detach from the healed " + f.a().name() + ": " + Message(detached));
  auto attached = f.Attach(*on_b);
  if (!attached.ok()) {
    c.Fail(kF14, "attach to " + f.b().name() + " after the partition healed: " + Message(attached));
  }
  f.MountOn(*on_b);
  f.CheckFiles(*on_b, std::string(kF14) + ": data fsynced on A is intact on B");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());
  TearDownAll(c);
}

}  // namespace

void AddFailoverCases(std::vector<Case>& cases) {
  const std::vector<std::string> tags = {"failover", "root", "slow"};
  for (Attacher attacher : {Attacher::kController, Attacher::kKubelet}) {
    const std::string who = AttacherName(attacher);
    for (bool rwo_pv : {true, false}) {
      cases.push_back(
          {"failover/crash-reschedule-" + who + (rwo_pv ? "-rwo-pv" : "-inline"),
           tags,
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
                     tags,
                     {"F14"},
                     AttachableOnly,
                     [attacher](CaseContext& c) { Partitioned(c, attacher); }});
  }
}

}  // namespace flexkit::conform
