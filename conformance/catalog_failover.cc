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
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "conformance/catalog.h"
#include "simulator/cluster.h"

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

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out.empty() ? "no error reported" : out;
}

std::string MessageOf(const sim::CallRecord& r) {
  if (!r.harness_problem.empty()) return r.harness_problem;
  if (r.verdict.status && !r.verdict.status->message.empty()) return r.verdict.status->message;
  return r.verdict.error;
}

// Shared: the tracker's undo keeps it alive after the case function ends
// (the runner unwinds after a FAIL, when the case's stack is gone).
class Failover : public std::enable_shared_from_this<Failover> {
 public:
  static std::shared_ptr<Failover> Make(CaseContext& c, Attacher attacher, bool rwo_pv) {
    auto f = std::make_shared<Failover>(c, attacher, rwo_pv);
    f->Start();
    return f;
  }
  Failover(CaseContext& c, Attacher attacher, bool rwo_pv)
      : c_(c), attacher_(attacher), rwo_pv_(rwo_pv), a_(c.node(0)), b_(SecondNode(c)) {}

  sim::Node& a() { return a_; }
  sim::Node& b() { return b_; }

  // A pod using the case's volume, bound to `n`, created; the cluster
  // settles in at most `rounds`.
  sim::Pod Schedule(sim::Node& n, int rounds = 8) {
    sim::Pod pod;
    pod.name = c_.Unique("pod");
    pod.uid = c_.Unique("uid");
    pod.node = n.name();
    pod.volumes = {volume_};
    sim::Manifest m;
    m.pods = {pod};
    cluster_->Apply(m);
    Settle(rounds);
    return pod;
  }
  // Schedule, and the pod must have its volume mounted.
  sim::Pod Place(sim::Node& n) {
    sim::Pod pod = Schedule(n);
    RequireMounted(pod, kF14, "set-up on " + n.name());
    return pod;
  }
  void Delete(const sim::Pod& pod) { cluster_->DeletePod(pod.ns, pod.name); }

  // kubelets and the controller until nothing changes; every call they made
  // is held to the universal rules.
  std::vector<std::string> Settle(int rounds = 8) {
    last_errors_ = cluster_->Settle(rounds);
    c_.CheckDrivenCalls();
    return last_errors_;
  }
  std::vector<std::string> Advance(sim::Clock::Duration d, int rounds = 8) {
    last_errors_ = cluster_->Advance(d, rounds);
    c_.CheckDrivenCalls();
    return last_errors_;
  }
  // The controller's maxWaitForUnmountDuration: past it, an unhealthy
  // node's attachments are force-detached.
  std::vector<std::string> WaitForForceDetach(int rounds = 8) {
    return Advance(sim::ControllerSettings{}.max_wait_for_unmount, rounds);
  }
  // What the last settle's kubelets and controller reported.
  const std::vector<std::string>& last_errors() const { return last_errors_; }
  // Whether `n`'s kubelet still has the volume set up (device or pods).
  bool SetUpOn(const sim::Node& n) {
    auto& k = cluster_->kubelet(n.name());
    return k.DeviceMounted(volume_name_) || !k.PodsWithVolume(volume_name_).empty();
  }

  bool Mounted(const sim::Pod& pod) {
    sim::Node& n = cluster_->node(pod.node);
    return n.running() && cluster_->kubelet(pod.node).PodsWithVolume(volume_name_).count(pod.uid) &&
           n.filesystem().IsMountPoint(PodDir(pod));
  }
  void RequireMounted(const sim::Pod& pod, const std::string& rule, const std::string& when) {
    if (!Mounted(pod)) {
      c_.Fail(rule, when + ": pod " + pod.name + " on " + pod.node +
                        " does not have its volume mounted; the cluster reports: " +
                        Joined(last_errors_));
    }
  }
  std::string PodDir(const sim::Pod& pod) {
    return cluster_->kubelet(pod.node).PodVolumeDir(pod, pod.volumes.front());
  }

  // The driver calls with `verb` made for `node` (attach, detach and
  // isattached name it in their arguments; others run on it) since `from`.
  std::vector<sim::CallRecord> CallsFor(const std::string& verb, const sim::Node& node,
                                        std::size_t from = 0) {
    std::vector<sim::CallRecord> out;
    auto calls = c_.transcript().Calls();
    for (std::size_t i = from; i < calls.size(); ++i) {
      const auto& r = calls[i];
      if (r.verb != verb || r.answered_from_cache) continue;
      const bool named = std::find(r.argv.begin(), r.argv.end(), node.name()) != r.argv.end();
      if (named || r.node == node.name()) out.push_back(r);
    }
    return out;
  }
  std::size_t CallCount() { return c_.transcript().Calls().size(); }

  // The pod writes `count` files through its volume; each is fsynced
  // unless `synced` is false (then only a clean unmount saves it). Returns
  // their checksums, which CheckFiles also expects from now on.
  std::map<std::string, std::uint64_t> WriteFiles(const sim::Pod& pod, const std::string& stem,
                                                  int count, bool synced = true) {
    std::map<std::string, std::uint64_t> written;
    sim::Node& n = cluster_->node(pod.node);
    for (int i = 0; i < count; ++i) {
      const std::string name = stem + "-" + std::to_string(i) + ".bin";
      std::string data;
      std::uint64_t x = Checksum(volume_name_ + name);
      data.reserve(64 * 1024);
      while (data.size() < 64 * 1024) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        data.push_back(static_cast<char>(x >> 56));
      }
      const std::string path = PodDir(pod) + "/" + name;
      try {
        if (synced) {
          n.filesystem().WriteFile(path, data);
        } else {
          WriteUnsynced(n, path, data);
        }
      } catch (const std::exception& e) {
        // Read-only by design (informational files): no data can follow the
        // pod, and kubelet requires nothing more (as CheckDataRoundTrip).
        if (!CaseContext::Listable(n, PodDir(pod)))
          c_.Fail("protocol §7: a mounted volume is writable", std::string("write: ") + e.what());
        c_.Skip("capability: the volume is mounted but not writable (" + std::string(e.what()) +
                "), so no data can follow the pod");
      }
      checksums_[name] = written[name] = Checksum(data);
    }
    return written;
  }

  // Every file written so far (or of `sums`) reads back with its checksum.
  void CheckFiles(const sim::Pod& pod, const std::string& rule) {
    CheckFiles(pod, rule, checksums_);
  }
  void CheckFiles(const sim::Pod& pod, const std::string& rule,
                  const std::map<std::string, std::uint64_t>& sums) {
    sim::Node& n = cluster_->node(pod.node);
    for (const auto& [name, sum] : sums) {
      std::string data;
      try {
        data = n.filesystem().ReadFile(PodDir(pod) + "/" + name);
      } catch (const std::exception& e) {
        c_.Fail(rule, "on " + n.name() + ": " + e.what());
      }
      if (Checksum(data) != sum) {
        c_.Fail(rule, "on " + n.name() + ": " + name + " has checksum " + Hex(Checksum(data)) +
                          " (" + std::to_string(data.size()) + " bytes), written with " + Hex(sum));
      }
    }
  }

  // The pod still has its volume mounted, reads what was written, and can
  // write and read back more.
  void CheckUsable(const sim::Pod& pod, const std::string& rule, const std::string& stem) {
    if (!Mounted(pod)) {
      c_.Fail(rule, PodDir(pod) + " on " + pod.node +
                        " is no longer mounted; the cluster reports: " + Joined(last_errors_));
    }
    CheckFiles(pod, rule);
    WriteFiles(pod, stem, 1);
    CheckFiles(pod, rule);
  }

  // Every regular file in the pod's volume now, with its checksum.
  std::map<std::string, std::uint64_t> Files(const sim::Pod& pod) {
    sim::Node& n = cluster_->node(pod.node);
    std::map<std::string, std::uint64_t> out;
    const std::string dir = PodDir(pod);
    std::error_code ec;
    const std::string real = "/proc/" + std::to_string(n.holder_pid()) + "/root" + dir;
    for (const auto& e : std::filesystem::directory_iterator(real, ec)) {
      if (!e.is_regular_file(ec)) continue;
      const std::string name = e.path().filename().string();
      out[name] = Checksum(n.filesystem().ReadFile(dir + "/" + name));
    }
    return out;
  }

  // The backend has every volume attached to `node` only (or nowhere when
  // `node` is null), and never had one attached twice.
  void CheckBackend(const sim::Node* node, const std::string& when) {
    if (!c_.profile().attachable()) return;
    auto doubles = c_.fixture().DoubleAttachments();
    if (!doubles.empty()) {
      c_.Fail(kF14, when + ": the backend had a volume attached to two nodes: " + doubles.front());
    }
    auto attachments = c_.fixture().Attachments();
    if (!attachments) {
      Witness(node, when);
      return;
    }
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

  // No backend record: the driver's isattached, asked for every node as
  // the controller asks (from the control plane, so a dead node is asked
  // about too), must name `node` alone. Not supported or a Failure
  // (unknown) says nothing.
  void Witness(const sim::Node* node, const std::string& when) {
    sim::Node* caller = b_.running() ? &b_ : a_.running() ? &a_ : nullptr;
    if (!caller) return;
    std::vector<std::string> attached;
    std::vector<std::string> unknown;
    for (sim::Node* n : {&a_, &b_}) {
      auto r = c_.Call(*caller, c_.argv().IsAttached(c_.Json(spec_), n->name()), "controller");
      if (!r.ok() || !r.verdict.status) {
        unknown.push_back(n->name());
        continue;
      }
      if (r.verdict.status->attached) attached.push_back(n->name());
    }
    auto list = [](const std::vector<std::string>& names) {
      std::string out;
      for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
      return "[" + out + "]";
    };
    if (attached.size() > 1) {
      c_.Fail(kF14, when + ": isattached says " + spec_.name + " is attached to " + list(attached) +
                        " at once (a volume is attached to one node at a time)");
    }
    for (sim::Node* n : {&a_, &b_}) {
      if (std::find(unknown.begin(), unknown.end(), n->name()) != unknown.end()) continue;
      const bool says = std::find(attached.begin(), attached.end(), n->name()) != attached.end();
      const bool want = node == n;
      if (says != want) {
        c_.Fail(kF14, when + ": isattached says " + spec_.name + " is " +
                          (says ? "attached to " : "not attached to ") + n->name() +
                          "; it should be attached to " + (node ? node->name() : "no node") +
                          " only");
      }
    }
  }

  // Whom the controller believes the volume is attached to, uncertain
  // attachments included.
  std::vector<std::string> ControllerAttachments() {
    std::vector<std::string> nodes;
    for (const auto& [key, attachment] : cluster_->controller().attachments()) {
      if (attachment.spec.name == volume_name_) nodes.push_back(key.second);
    }
    return nodes;
  }

  void Crash(sim::Node& n) {
    cluster_->CrashNode(n.name());  // every process in it, its daemon too
    c_.fixture().NodeCrashed(n);
  }
  // New namespace, the instance and daemon running again, and kubelet
  // reconstructing what it had (it calls the driver at the next settle).
  void Restart(sim::Node& n) {
    cluster_->RestartNode(n.name());
    c_.fixture().NodeRestarted(n);
  }
  // Cut off: the node's daemon hangs, the controller sees the node
  // unhealthy, and its kubelet cannot see the API server (no syncs).
  void Partition(sim::Node& n, bool cut) {
    n.SetPartitioned(cut);
    c_.fixture().SetBackendReachable(n, !cut);
    if (cut) {
      cluster_->StopKubelet(n.name());
    } else {
      cluster_->StartKubelet(n.name());
    }
    c_.transcript().AddEvent(cut ? "node partitioned: its daemon hangs, its kubelet is cut off"
                                 : "partition healed: its daemon answers, its kubelet syncs",
                             {{"node", n.name()}});
  }

 private:
  static sim::Node& SecondNode(CaseContext& c) {
    if (c.node_count() < 2) {
      c.Skip("profile: a failover needs two nodes (nodes: 2); the profile has " +
             std::to_string(c.node_count()));
    }
    return c.node(1);
  }

  // The cluster over the case's nodes (their backends already run there),
  // the driver installed in every plugin dir, the volume as an RWO
  // PersistentVolume or inline, and the undo that tears everything down.
  void Start() {
    const DriverProfile& p = c_.profile();
    sim::ClusterConfig config;
    config.run_dir = c_.case_dir();
    config.profile = c_.version().name;
    config.call = c_.DrivenCallSettings();
    // The control plane reaches every node's backend by the node's name,
    // as B's environment does (A is the node that fails).
    config.control_plane_env = b_.env();
    cluster_ = std::make_unique<sim::Cluster>(config, c_.DrivenRunner(), &c_.transcript());
    const bool by_controller = attacher_ == Attacher::kController;
    cluster_->AdoptNode(a_, by_controller);
    cluster_->AdoptNode(b_, by_controller);
    cluster_->InstallDriver(p.driver, p.driver_name);

    sim::VolumeSpec spec = c_.Volume(c_.Unique("vol"));
    spec_ = spec;
    volume_name_ = spec.name;
    sim::FlexSource source;
    source.driver = spec.driver;
    source.fs_type = spec.fs_type;
    source.options = spec.options;
    sim::Manifest m;
    if (!p.secrets.empty()) {
      sim::Secret secret;
      secret.name = c_.Unique("secret");
      secret.type = spec.driver;
      secret.data = p.secrets;
      source.secret_name = secret.name;
      m.secrets.push_back(secret);
    }
    volume_.name = volume_name_;
    if (rwo_pv_) {
      sim::PersistentVolume pv;
      pv.name = volume_name_;
      pv.flex = source;
      pv.access_modes = {"ReadWriteOnce"};
      sim::PersistentVolumeClaim claim;
      claim.name = c_.Unique("claim");
      claim.volume_name = pv.name;
      volume_.claim_name = claim.name;
      m.pvs.push_back(pv);
      m.pvcs.push_back(claim);
    } else {
      volume_.flex = source;
    }
    cluster_->Apply(m);
    c_.tracker().Push("delete the pods and let the cluster tear down " + volume_name_,
                      [self = shared_from_this()] { self->TearDown(); });
  }

  // Every node back up and reachable, every pod deleted, the cluster
  // settled: nothing may stay mounted or attached.
  void TearDown() {
    // Whatever happens, the control plane and its driver copies go.
    struct Release {
      std::unique_ptr<sim::Cluster>& cluster;
      ~Release() { cluster.reset(); }
    } release{cluster_};
    for (sim::Node* n : {&a_, &b_}) {
      if (n->partitioned()) Partition(*n, false);
      if (!n->running()) Restart(*n);
    }
    std::vector<std::pair<std::string, std::string>> pods;
    for (const auto& [key, pod] : cluster_->state().pods) pods.emplace_back(pod.ns, pod.name);
    for (const auto& [ns, name] : pods) cluster_->DeletePod(ns, name);
    auto errors = Settle();
    if (!errors.empty()) throw std::runtime_error("the cluster did not settle: " + Joined(errors));
    for (sim::Node* n : {&a_, &b_}) {
      if (SetUpOn(*n)) throw std::runtime_error(volume_name_ + " is still set up on " + n->name());
    }
    if (!ControllerAttachments().empty())
      throw std::runtime_error("the controller still has " + volume_name_ + " attached");
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
  bool rwo_pv_;
  sim::Node& a_;
  sim::Node& b_;
  std::unique_ptr<sim::Cluster> cluster_;
  std::string volume_name_;
  sim::VolumeSpec spec_;   // as the controller's isattached names it
  sim::PodVolume volume_;  // the pod's reference to it (claim or inline)
  std::map<std::string, std::uint64_t> checksums_;
  std::vector<std::string> last_errors_;
};

// 1-5 of issue 7: A crashes with the pod on it, the pod is force-deleted
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
    f.CheckBackend(&f.a(), "while the pod on " + f.b().name() + " waits for the volume");
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
    f.CheckBackend(&f.a(), "while the volume waits for " + f.a().name() + " to return");
    c.transcript().AddEvent("stuck, safely",
                            {{"why", "the volume stays attached to " + f.a().name() +
                                         " alone until it returns: " + Joined(f.last_errors())}});
    // A comes back, its kubelet tears down the orphaned pod (and detaches,
    // when it manages attach), the controller's retried detach goes
    // through, and B gets the volume.
    f.Restart(f.a());
    f.Settle();
  }
  f.RequireMounted(on_b, kF14, "the pod recreated on " + f.b().name());
  f.CheckFiles(on_b, std::string(kF14) + ": data fsynced on A is intact on B");
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

// Issue 7.6a: A comes back before the pod moves; the volume stays on A and
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
  f.RequireMounted(on_a, "protocol §7.5: a restarted node gets its pod's volume back",
                   f.a().name() + " restarted");
  f.CheckFiles(on_a, std::string(kF14) + ": data survives a node restart in place");
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
               "F14 (protocol §7.1 step 12: unmountdevice leaves the data on the device; "
               "a clean move loses nothing)");
  f.CheckBackend(&f.b(), "after the move to " + f.b().name());
  TearDownAll(c);
}

// Issue 7.6b: a second pod on B asks for the volume while A is alive and
// uses it: refused with a message, A's data and mount untouched, never two
// attachments; the detach that follows the uncertain attach leaves A alone.
void RefusedWhileOwnerAlive(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto shared = Failover::Make(c, attacher, rwo_pv);
  Failover& f = *shared;
  auto on_a = f.Place(f.a());
  f.WriteFiles(on_a, "owner", 2);
  const std::size_t before_b = f.CallCount();
  auto on_b = f.Schedule(f.b());
  if (f.Mounted(on_b)) {
    c.Fail(kF14, "the volume was set up on " + f.b().name() + " while " + f.a().name() +
                     " is running with it mounted: a live attachment was taken");
  }
  auto attaches = f.CallsFor("attach", f.b(), before_b);
  if (attaches.empty()) {
    c.Fail(kF14, "no attach to " + f.b().name() + " was tried: " + Joined(f.last_errors()));
  }
  if (MessageOf(attaches.front()).empty())
    c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
  f.CheckBackend(&f.a(), "after the refused attach to " + f.b().name());
  f.CheckUsable(on_a, std::string(kF14) + ": the owner keeps its volume", "owner-after");

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
      c.Fail(kF12, "detach from " + f.b().name() + " (never attached): " + MessageOf(d));
    }
  }
  f.CheckBackend(&f.a(), "after detaching the refused attach from " + f.b().name());
  f.CheckUsable(on_a, std::string(kF12) + ": B's detach leaves A's volume alone", "owner-end");
  TearDownAll(c);
}

// Issue 7.6c: A lives but is cut off: its daemon hangs and its kubelet
// cannot see the API server. The pod is recreated on B: B's attach is
// refused (A's instance runs), or the controller's force-detach through
// A's daemon times out; stuck without harm until the partition heals,
// then A tears down and the volume moves with its data.
void Partitioned(CaseContext& c, Attacher attacher) {
  auto shared = Failover::Make(c, attacher, /*rwo_pv=*/true);
  Failover& f = *shared;
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
    if (f.Mounted(on_b)) {
      c.Fail(kF14, "the volume was set up on " + f.b().name() + " while " + f.a().name() +
                       " is alive (only cut off)");
    }
    if (attaches.empty() || MessageOf(attaches.front()).empty())
      c.Fail(kF14, "the refused attach to " + f.b().name() + " gives no message saying why");
  } else {
    const std::size_t before_force = f.CallCount();
    f.WaitForForceDetach(/*rounds=*/1);  // A is unhealthy: partitioned
    auto forced = f.CallsFor("detach", f.a(), before_force);
    if (f.Mounted(on_b)) {
      c.Fail(kF14, "the volume moved to " + f.b().name() + " through a force-detach from " +
                       f.a().name() +
                       ", whose daemon is unreachable while it has the volume mounted");
    }
    if (forced.empty() || MessageOf(forced.back()).empty())
      c.Fail(kF14, "the failed force-detach from " + f.a().name() + " gives no message");
  }
  f.CheckBackend(&f.a(), "during the partition");
  f.CheckFiles(on_a, std::string(kF14) + ": the partitioned owner's data is untouched");

  f.Partition(f.a(), false);  // A's kubelet syncs: the pod is gone
  f.Settle();
  f.RequireMounted(on_b, kF14, "after the partition healed");
  f.CheckFiles(on_b, std::string(kF14) + ": data fsynced on A is intact on B");
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
      "F14 (protocol §7.4 step 5: the returning node's teardown leaves the new node's volume "
      "alone)";
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
    f.CheckFiles(on_b, "F14 (storage: shared: data written and fsynced on A is on B)", written);
  } else {
    for (const auto& [name, sum] : f.Files(on_b)) {
      if (written.count(name))
        c.Fail("storage: ephemeral (every mount starts empty)",
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
}

}  // namespace flexkit::conform
