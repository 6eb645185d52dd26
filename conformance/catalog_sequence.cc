// [sequence]: walks of the reference model (conformance/model) that make
// every call in every state closer than --depth (a transition tour), and
// seeded random walks, run against the driver through the simulator.
// Every step's outcome and the real state after it (mounts in the node's
// namespace; the attachment as isattached reports it and, on the
// convoy-fake fixture, as the fake cloud records it) are compared with the
// model; the first divergence is shrunk to the shortest sequence that
// still fails and reported with how to replay it.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "conformance/catalog.h"
#include "conformance/leak_audit.h"
#include "conformance/model/sequence_search.h"
#include "simulator/mount_table.h"

namespace flexkit::conform {
namespace {

using model::Action;
using model::Expectation;
using model::Outcome;
using model::Sequence;
using model::State;
using model::Verb;
using model::VolumeModel;

struct Divergence {
  Divergence(std::size_t at, std::string broken, std::string wanted, std::string got)
      : step(at), rule(std::move(broken)), expected(std::move(wanted)), actual(std::move(got)) {}
  std::size_t step = 0;  // == sequence size: the teardown after it
  std::string rule;
  std::string expected;
  std::string actual;
  std::optional<std::size_t> call;  // the call whose reply or effect diverged (Finding::call)
};

Outcome OutcomeOf(const sim::CallResult& r) {
  if (r.ok()) return Outcome::kSuccess;
  if (r.not_supported()) return Outcome::kNotSupported;
  return Outcome::kFailure;
}

std::string Allowed(const Expectation& e) {
  std::string text;
  for (auto o : e.allowed) text += std::string(text.empty() ? "" : " or ") + model::OutcomeName(o);
  return text;
}

bool HasOption(const std::string& options, const std::string& option) {
  std::stringstream in(options);
  for (std::string token; std::getline(in, token, ',');) {
    if (token == option) return true;
  }
  return false;
}

// The pods of a case's sequences, [node][pod], made once per case: a
// sequence's pod dirs are still its own (they end in its volume's name),
// and it creates only the last directory of each, as kubelet does for a
// running pod's new volume, not the whole pod tree.
using Pods = std::vector<std::vector<sim::MountExtras>>;

Pods PodsFor(CaseContext& c, const VolumeModel& m) {
  Pods pods(static_cast<std::size_t>(m.domain().nodes));
  for (auto& on_node : pods) {
    for (int p = 0; p < m.domain().pods; ++p)
      on_node.push_back(c.Pod("pod" + std::to_string(p + 1)));
  }
  return pods;
}

// One sequence on a fresh volume: its own unique volume name, pod dirs and
// global paths, so nothing of an earlier sequence is visible; everything it
// set up is torn down through the tracker before the next one starts.
class SequenceRun {
 public:
  SequenceRun(CaseContext& c, const VolumeModel& m, const Pods& pods) : c_(c), model_(m) {
    const auto& domain = m.domain();
    const std::string name = c.Unique("seq");
    spec_rw_ = c.Volume(name, false);
    spec_ro_ = c.Volume(name, true);
    component_ = c.Attacher();
    isattached_asked_ = !c.profile().kubelet_managed_attach;
    nodes_.resize(static_cast<std::size_t>(domain.nodes));
    for (int n = 0; n < domain.nodes; ++n) {
      auto& node = nodes_[static_cast<std::size_t>(n)];
      node.node = &c.node(static_cast<std::size_t>(n));
      auto paths = c.Paths(*node.node);
      node.global_path = paths.DeviceMountPath(name);
      for (const auto& pod : pods[static_cast<std::size_t>(n)]) {
        node.pod_dirs.push_back(paths.PodVolumeDir(pod.pod_uid, name));
        node.pods.push_back(pod);
      }
    }
    // Undone newest first: pod dirs, then global mounts, then attachments.
    for (auto& node : nodes_) {
      c.tracker().Push("sequence: detach " + name + " from " + node.node->name(),
                       [this, &node] { TearDownAttachment(node); });
    }
    for (auto& node : nodes_) {
      c.tracker().Push("sequence: unmountdevice " + node.global_path,
                       [this, &node] { TearDownGlobal(node); });
    }
    for (auto& node : nodes_) {
      for (const auto& dir : node.pod_dirs) {
        c.tracker().Push("sequence: unmount " + dir,
                         [this, &node, dir] { TearDownPod(node, dir); });
      }
    }
  }

  // The undos registered above point into this object: whatever happens,
  // they have run before it is gone.
  std::optional<Divergence> Run(const Sequence& sequence) {
    try {
      return RunSteps(sequence);
    } catch (...) {
      c_.tracker().UnwindAll();
      throw;
    }
  }

 private:
  std::optional<Divergence> RunSteps(const Sequence& sequence) {
    State state = model_.Initial();
    backend_before_ = BackendAttachments();
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      const Action& a = sequence[i];
      const Expectation e = model_.Expect(state, a);
      std::optional<Divergence> d;
      try {
        d = Enact(a, e);
        if (!d) {
          state = model_.Next(state, a);
          d = Observe(state, a);
        }
      } catch (const CaseFailure& f) {  // a universal rule (F1-F3, F16, F17, F21, F7)
        d = Divergence{0, f.rule, "a well-formed reply", f.what()};
      }
      if (d) {
        d->step = i;
        if (const std::size_t calls = c_.transcript().Calls().size(); calls > 0)
          d->call = calls - 1;
        c_.tracker().UnwindAll();  // the divergence is the finding; clean up quietly
        return d;
      }
    }
    auto errors = c_.tracker().UnwindAll();
    if (!errors.empty()) {
      return Divergence{sequence.size(),
                        "teardown-succeeds: kubelet's teardown of what the case set up succeeds",
                        "teardown succeeds", errors.front()};
    }
    // After the teardown nothing is attached anywhere: the backend's
    // record, or isattached on every node, must say so.
    if (auto d = ObserveBackend(model_.Initial(), Action{Verb::kDetach, 0, -1})) {
      d->step = sequence.size();
      return d;
    }
    return std::nullopt;
  }

  struct NodeVolume {
    sim::Node* node = nullptr;
    std::string global_path;
    std::vector<sim::MountExtras> pods;
    std::vector<std::string> pod_dirs;
    std::string attach_device;  // attach's reply
    std::string mount_device;   // waitforattach's reply (or attach's)
    std::string loop_backing;   // the attach device's backing file, when a loop device
    bool ever_attached = false;
  };

  std::optional<Divergence> OutcomeDiverges(const Action& a, const Expectation& e,
                                            const sim::CallResult& r) {
    const Outcome got = OutcomeOf(r);
    if (e.allowed.count(got)) return std::nullopt;
    std::string actual = model::OutcomeName(got);
    if (!r.verdict.error.empty()) actual += ": " + r.verdict.error;
    // A reply that broke a rule of its own (stray output, say) diverges
    // under that rule: one cause, one rule.
    const Finding own = c_.FailingFinding(r);
    return Divergence{0, own.rule.empty() ? e.rule : own.rule,
                      model::ActionName(a) + " answers " + Allowed(e), actual};
  }

  // One step of the walk, as kubelet (or, for isattached, the controller)
  // takes it.
  std::optional<Divergence> Enact(const Action& a, const Expectation& e) {
    NodeVolume& v = nodes_[static_cast<std::size_t>(a.node)];
    switch (a.verb) {
      case Verb::kAttach:
        return Attach(v, a, e);
      case Verb::kWaitForAttach:
        return WaitForAttach(v, a, e);
      case Verb::kIsAttached:
        return AskIsAttached(v, a, e);
      case Verb::kMountDevice:
        return MountDevice(v, a, e);
      case Verb::kMount:
        return MountPod(v, a, e);
      case Verb::kUnmount:
        return UnmountPod(v, a, e);
      case Verb::kUnmountDevice:
        return UnmountDevice(v, a, e);
      case Verb::kDetach:
        return Detach(v, a, e);
    }
    return std::nullopt;
  }

  std::optional<Divergence> Attach(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    v.ever_attached = true;  // a failed attach may still have attached (§5.3: uncertain)
    auto r = c_.ops().CallAttach(n, component_, spec_rw_, n.name());
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    // Not supported or no device: kubelet records devicePath "" (§3.4, §5.4).
    const std::string device = r.ok() && r.verdict.status ? r.verdict.status->device : "";
    if (!v.attach_device.empty() && device != v.attach_device) {
      return Divergence{0, "F9 attach-same-device: a repeated attach returns the same device",
                        "device " + v.attach_device, "device " + device};
    }
    v.attach_device = device;
    if (v.mount_device.empty()) v.mount_device = device;
    v.loop_backing = LoopBackingFile(device);
    return std::nullopt;
  }

  std::optional<Divergence> WaitForAttach(NodeVolume& v, const Action& a, const Expectation& e) {
    auto r = c_.ops().CallWaitForAttach(*v.node, spec_rw_, v.attach_device);
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    if (r.ok()) {
      const std::string device = r.verdict.status ? r.verdict.status->device : "";
      // Given "", kubelet passes on whatever it answers (§5.4).
      if (device.empty() && !v.attach_device.empty()) {
        return Divergence{0, e.rule, "waitforattach returns the device", "no device"};
      }
      v.mount_device = device;
    }
    return std::nullopt;
  }

  std::optional<Divergence> AskIsAttached(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    auto r = c_.ops().CallIsAttached(n, sim::Component::kController, spec_rw_, n.name());
    if (auto d = OutcomeDiverges(a, e, r)) {
      // Of a volume not attached there the controller never asks
      // (§7.4 item 6): whatever the answer, kubelet never sees it.
      if (!e.attached) {
        // The outcome alone, not the message: one WARN per node, not per walk.
        c_.Warn(model::ActionName(a) + " of a volume not attached there answers " +
                model::OutcomeName(OutcomeOf(r)) + " [" + d->rule +
                "; a WARN: the controller asks only of volumes it believes attached]");
        return std::nullopt;
      }
      return IsAttachedDivergence(std::move(*d));
    }
    if (r.ok() && e.check_attached) {
      const bool attached = r.verdict.status && r.verdict.status->attached;
      // The controller asks only of volumes it believes attached (§5.5):
      // true for one the model has detached is recorded, and the walk goes on.
      if (attached && !e.attached) {
        c_.Warn(
            "isattached answered attached:true for a volume the model has detached (the "
            "controller never asks then)");
        return std::nullopt;
      }
      if (attached != e.attached) {
        return IsAttachedDivergence(
            Divergence{0, e.rule, std::string("attached: ") + (e.attached ? "true" : "false"),
                       std::string("attached: ") + (attached ? "true" : "false")});
      }
    }
    return std::nullopt;
  }

  std::optional<Divergence> MountDevice(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    sim::VolumeOperations& ops = c_.ops();
    // kubelet's mount of an attached volume is one operation:
    // waitforattach, then mountdevice with the device it gave (§7.1
    // steps 7-9); a driver may find or make the device only there.
    auto w = ops.CallWaitForAttach(n, spec_rw_, v.attach_device);
    if (!w.ok() && !w.not_supported()) {
      return Divergence{0, "F8 waitforattach-device: waitforattach of an attached volume succeeds",
                        "waitforattach before mountdevice answers Success",
                        std::string(model::OutcomeName(OutcomeOf(w))) + ": " + w.verdict.error};
    }
    if (w.ok() && w.verdict.status && !w.verdict.status->device.empty())
      v.mount_device = w.verdict.status->device;
    n.filesystem().MakeDirs(v.global_path, 0750);  // prepareForMount (§5.6)
    auto r = ops.CallMountDevice(n, spec_rw_, v.global_path, v.mount_device);
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    if (r.not_supported() && !n.filesystem().IsMountPoint(v.global_path)) {
      KubeletDid(n, [&](sim::Step& s) {
        ops.DefaultMountDevice(n, spec_rw_, v.mount_device, v.global_path, s);
      });
    }
    return std::nullopt;
  }

  std::optional<Divergence> MountPod(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    sim::VolumeOperations& ops = c_.ops();
    const auto& dir = v.pod_dirs[static_cast<std::size_t>(a.pod)];
    auto pod = v.pods[static_cast<std::size_t>(a.pod)];
    const auto& spec = model::PodReadOnly(a.pod) ? spec_ro_ : spec_rw_;
    n.filesystem().MakeDirs(dir, 0750);  // prepareForMount (§5.7)
    auto r = ops.CallMount(n, spec, pod, dir);
    // On any error kubelet removes the pod dir (§5.7), when it can.
    if (!r.ok() && !r.not_supported() && !n.filesystem().IsMountPoint(dir)) {
      sim::Step removal;
      ops.RemoveDir(n, dir, removal);
    }
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    if (r.not_supported() && !n.filesystem().IsMountPoint(dir)) {
      KubeletDid(n, [&](sim::Step& s) { ops.DefaultSetUp(n, spec, v.global_path, dir, s); });
    }
    return std::nullopt;
  }

  std::optional<Divergence> UnmountPod(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    sim::VolumeOperations& ops = c_.ops();
    const auto& dir = v.pod_dirs[static_cast<std::size_t>(a.pod)];
    // kubelet calls unmount whenever the dir exists, mounted or not (§5.8).
    n.filesystem().MakeDirs(dir, 0750);
    auto r = ops.CallUnmount(n, spec_rw_.driver, dir);
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    if (r.not_supported()) KubeletDid(n, [&](sim::Step& s) { ops.DefaultUnmount(n, dir, s); });
    return RemoveAfterSuccess(n, dir, e.rule);
  }

  std::optional<Divergence> UnmountDevice(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    sim::VolumeOperations& ops = c_.ops();
    n.filesystem().MakeDirs(v.global_path, 0750);
    // kubelet skips the call where the path is no mount point (§5.9
    // step 4): asked there anyway, the driver's answer is only recorded.
    const bool kubelet_calls = n.filesystem().IsMountPoint(v.global_path);
    auto r = ops.CallUnmountDevice(n, spec_rw_.driver, v.global_path);
    if (auto d = OutcomeDiverges(a, e, r)) {
      if (kubelet_calls) return d;
      c_.Warn(d->rule + ": " + d->actual +
              " on a path that is no mount point (a WARN: kubelet skips unmountdevice there)");
    }
    if (r.not_supported()) {
      KubeletDid(n, [&](sim::Step& s) { ops.DefaultUnmount(n, v.global_path, s); });
    }
    return RemoveAfterSuccess(n, v.global_path, e.rule);
  }

  std::optional<Divergence> Detach(NodeVolume& v, const Action& a, const Expectation& e) {
    sim::Node& n = *v.node;
    auto r = c_.ops().CallDetach(n, component_, spec_rw_, n.name());
    if (auto d = OutcomeDiverges(a, e, r)) return d;
    if (r.ok()) {
      // The loop device, as the harness sees it, must be gone with
      // the attachment (one that outlives it is a host leak).
      if (!v.loop_backing.empty() && !LoopReleased(v.attach_device, v.loop_backing)) {
        return Divergence{0, "F12 detach-releases: detach releases the attachment",
                          n.name() + ": " + v.attach_device + " released",
                          v.attach_device + " still backed by " + v.loop_backing};
      }
      // A new attach may give another device; only a repeat must not.
      v.attach_device.clear();
      v.mount_device.clear();
      v.loop_backing.clear();
    }
    return std::nullopt;
  }

  // After a successful unmount(device), kubelet removes the directory
  // (non-recursive): it must be unmounted and empty (F11).
  std::optional<Divergence> RemoveAfterSuccess(sim::Node& n, const std::string& dir,
                                               const std::string& rule) {
    if (n.filesystem().IsMountPoint(dir)) {
      return Divergence{0, rule, dir + " unmounted", "still a mount point"};
    }
    sim::Step removal;
    c_.ops().RemoveDir(n, dir, removal);  // the driver may have removed it (cluster-facts §3)
    if (!removal.ok() && n.filesystem().PathExists(dir)) {
      return Divergence{0, rule, "kubelet removes " + dir, removal.error};
    }
    return std::nullopt;
  }

  // The real state against the model's: how many mounts each path has and
  // whether each pod mount is read-only as asked.
  std::optional<Divergence> Observe(const State& state, const Action& last) {
    const std::string rule = "model-state: the real state after the step is the model's";
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const auto& v = nodes_[i];
      const auto& want = state.nodes[i];
      const std::string where = v.node->name() + ": ";
      // One read of the node's table for every path checked below.
      const auto mounts = v.node->Mounts();
      const auto& table = *mounts;
      if (model_.domain().attachable) {
        const std::size_t count = sim::MountCountAt(table, v.global_path);
        const std::size_t expected = want.device_mounted ? 1 : 0;
        if (count != expected) {
          return Divergence{0, count > 1 ? "F9 no-stacked-mounts: no stacked mounts" : rule,
                            where + std::to_string(expected) + " mount(s) at the global path",
                            std::to_string(count) + " at " + v.global_path};
        }
      }
      for (std::size_t p = 0; p < v.pod_dirs.size(); ++p) {
        std::size_t count = sim::MountCountAt(table, v.pod_dirs[p]);
        // podVolume: directory: the pod dir is the volume (kubelet removes
        // it after each unmount and failed mount).
        if (count == 0 && c_.PodVolumeSetUp(*v.node, v.pod_dirs[p])) count = 1;
        const bool mounted = want.PodMounted(static_cast<int>(p));
        const std::size_t expected = mounted ? 1 : 0;
        const std::string pod = "pod-" + std::to_string(p + 1);
        if (count != expected) {
          return Divergence{0, count > 1 ? "F9 no-stacked-mounts: no stacked mounts" : rule,
                            where + std::to_string(expected) + " mount(s) at " + pod + "'s dir",
                            std::to_string(count) + " at " + v.pod_dirs[p]};
        }
        if (mounted) {
          const bool want_ro = model::PodReadOnly(static_cast<int>(p));
          const std::string options = sim::TopmostOptionsAt(table, v.pod_dirs[p]);
          const bool ro = HasOption(options, "ro");
          bool broken = ro != want_ro;
          // Asked read-only without the flag: what matters is whether the
          // pod can write, as readonly/write-fails judges (a filesystem
          // read-only by design need not show the flag).
          if (want_ro && !ro) broken = WriteGoesThrough(c_, *v.node, v.pod_dirs[p]);
          if (broken) {
            return Divergence{
                0, "F18 read-only: kubernetes.io/readwrite is honoured",
                where + pod + " mounted " + (want_ro ? "ro" : "rw"),
                "mounted with " + options + (want_ro ? " (a write through it succeeded)" : "")};
          }
        }
      }
    }
    return ObserveBackend(state, last);
  }

  // No backend record to read: after each attach and detach the driver's
  // isattached is asked for every node (from the node the step ran on, as
  // the controller asks about any node; under kubelet-managed attach each
  // node on itself, where its kubelet would ask and where a driver may
  // keep that node's attachments) and must match the model: attached
  // where it is, and never to two nodes at once.
  std::optional<Divergence> Witness(const State& state, const Action& last) {
    if (!model_.domain().attachable) return std::nullopt;
    if (last.verb != Verb::kAttach && last.verb != Verb::kDetach) return std::nullopt;
    sim::Node& caller = *nodes_[static_cast<std::size_t>(last.node)].node;
    std::vector<std::string> says;
    std::optional<Divergence> wrong;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const std::string& name = nodes_[i].node->name();
      sim::Node& asked_on = isattached_asked_ ? caller : *nodes_[i].node;
      if (!asked_on.running()) continue;  // a node that is down says nothing
      auto r = c_.ops().CallIsAttached(asked_on, sim::Component::kController, spec_rw_, name);
      if (!r.ok() || !r.verdict.status) continue;  // unknown: says nothing
      const bool attached = r.verdict.status->attached;
      if (attached) says.push_back(name);
      // The controller asks only of volumes it believes attached (§7.4
      // item 6): a lone true where the model has detached is recorded, as
      // at the isattached step; true on two nodes at once is judged below.
      if (attached && !state.nodes[i].attached) {
        c_.Warn(name +
                ": isattached answered attached:true for a volume the model has detached "
                "(the controller never asks then)");
        continue;
      }
      if (attached != state.nodes[i].attached && !wrong) {
        wrong =
            Divergence{0, "F28 isattached-honest: isattached tells where the volume is attached",
                       name + ": isattached " + (state.nodes[i].attached ? "true" : "false"),
                       std::string("isattached ") + (attached ? "true" : "false")};
      }
    }
    if (says.size() > 1) {
      Divergence twice{0, "F14 follows-pod: a volume is attached to one node at a time",
                       "isattached true on one node at most",
                       "isattached true on " + says.front() + " and " + says.back()};
      // Never false: no F28 either.
      if (!c_.IsAttachedWitnesses(caller, twice.actual, twice.rule)) return std::nullopt;
      return IsAttachedDivergence(std::move(twice));
    }
    return wrong ? IsAttachedDivergence(std::move(*wrong)) : std::nullopt;
  }

  // Under kubelet-managed attach nothing runs isattached (§7.3): a wrong
  // answer cannot mislead kubelet, so it is recorded and the walk goes on.
  std::optional<Divergence> IsAttachedDivergence(Divergence d) {
    if (isattached_asked_) return d;
    c_.Warn(
        d.rule + ": expected " + d.expected + ", got " + d.actual +
        " (a WARN: the profile says kubelet-managed attach, and kubelet never runs isattached)");
    return std::nullopt;
  }

  // The attachments as the backend itself records them, where the fixture
  // can read them (convoy-fake's cloud): never attached where the model
  // says detached; attached where it says attached, once the backend holds
  // any of the driver's volumes (a VFS volume has no attachment to see).
  // Attachments there before the sequence began (what an earlier one left
  // behind, already reported) are not this sequence's.
  std::optional<Divergence> ObserveBackend(const State& state, const Action& last) {
    auto attachments = BackendAttachments();
    if (!attachments) return Witness(state, last);
    std::map<std::string, std::string> attached_on;  // node -> backend volume
    for (const auto& pair : *attachments) {
      if (!backend_before_ || !backend_before_->count(pair)) attached_on[pair.second] = pair.first;
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const std::string& name = nodes_[i].node->name();
      const bool want = state.nodes[i].attached;
      auto have = attached_on.find(name);
      if (have != attached_on.end() && !want) {
        return Divergence{0, "F12 detach-releases: detach releases the attachment",
                          name + ": nothing attached in the backend",
                          "backend volume " + have->second + " attached to " + name};
      }
      if (have == attached_on.end() && want && backend_has_volumes_) {
        return Divergence{
            0, "attach-to-named-node: attach attaches the volume to the node it names",
            name + ": the volume attached in the backend", "no backend attachment on " + name};
      }
    }
    return std::nullopt;
  }

  // (backend volume, node) pairs; nullopt when the fixture cannot see them.
  using BackendPairs = std::set<std::pair<std::string, std::string>>;
  std::optional<BackendPairs> BackendAttachments() {
    auto attachments = c_.fixture().Attachments();
    if (!attachments) return std::nullopt;
    BackendPairs pairs;
    backend_has_volumes_ = !attachments->empty();
    for (const auto& [volume, hosts] : *attachments) {
      for (const auto& host : hosts) pairs.emplace(volume, host);
    }
    return pairs;
  }

  // Teardown (the tracker's undo): kubelet's order, skipping what it would
  // skip; a driver error is reported, and what it left is cleaned anyway so
  // the next sequence and the leak audit start clean.
  void TearDownPod(NodeVolume& v, const std::string& dir) {
    sim::Node& n = *v.node;
    const sim::Step t = c_.ops().TearDownAt(n, spec_rw_.driver, dir);
    if (!t.skipped.empty()) return;
    CleanUp(n, dir, t.failed_by_call() ? "unmount " + dir + ": " + t.error : "");
  }

  void TearDownGlobal(NodeVolume& v) {
    sim::Node& n = *v.node;
    // kubelet unmounts a device only where it mounted one: an attachable
    // volume whose device mount path is there.
    if (!model_.domain().attachable || !n.filesystem().PathExists(v.global_path)) return;
    const sim::Step u = c_.ops().UnmountDevice(n, spec_rw_, v.global_path);
    if (u.skipped.rfind("Unmount skipped", 0) == 0) return;  // the path is missing
    CleanUp(n, v.global_path,
            u.failed_by_call() ? u.verb + " " + v.global_path + ": " + u.error : "");
  }

  void TearDownAttachment(NodeVolume& v) {
    if (!v.ever_attached) return;
    const sim::Step d = c_.ops().Detach(*v.node, component_, spec_rw_, v.node->name());
    if (!d.ok()) throw std::runtime_error("detach " + spec_rw_.name + ": " + d.error);
  }

  // A kubelet fallback after a step's call: its failure is the harness's
  // (the step's outcome was judged already).
  static void KubeletDid(sim::Node& n, const std::function<void(sim::Step&)>& action) {
    sim::Step step;
    action(step);
    if (!step.ok()) {
      throw std::runtime_error("kubelet's own step on " + n.name() + " failed: " + step.error);
    }
  }

  // What a teardown left, cleaned up by the harness so the next sequence
  // and the leak audit start clean; `problem` (or a mount left) is thrown.
  void CleanUp(sim::Node& n, const std::string& dir, std::string problem) {
    for (int layer = 0; layer < 8 && n.filesystem().IsMountPoint(dir); ++layer) {
      if (problem.empty()) problem = dir + " still mounted after teardown";
      KubeletDid(n, [&](sim::Step& s) { c_.ops().DefaultUnmount(n, dir, s); });
    }
    KubeletDid(n, [&](sim::Step& s) { c_.ops().RemoveDir(n, dir, s); });
    if (!problem.empty()) throw std::runtime_error(problem);
  }

  CaseContext& c_;
  const VolumeModel& model_;
  sim::VolumeSpec spec_rw_;
  sim::VolumeSpec spec_ro_;
  sim::Component component_ = sim::Component::kController;
  bool isattached_asked_ = true;  // false under kubelet-managed attach (§7.3)
  std::vector<NodeVolume> nodes_;
  std::optional<std::set<std::pair<std::string, std::string>>> backend_before_;
  bool backend_has_volumes_ = false;
};

VolumeModel ModelFor(CaseContext& c) {
  model::Domain domain;
  domain.nodes = static_cast<int>(std::min<std::size_t>(c.node_count(), 2));
  domain.pods = 2;
  domain.attachable = c.profile().attachable();
  return VolumeModel(domain);
}

// Runs one sequence fresh; the transcript keeps only this run.
std::optional<Divergence> RunFresh(CaseContext& c, const VolumeModel& m, const Pods& pods,
                                   const Sequence& s, const std::string& label) {
  c.ClearTranscript();
  c.transcript().AddEvent("sequence", {{"label", label}, {"steps", model::SequenceName(s)}});
  SequenceRun run(c, m, pods);
  return run.Run(s);
}

// Shrinks the failing sequence, reruns it (so the transcript holds its
// calls) and ends the case with a FAIL that says how to replay it.
[[noreturn]] void ShrinkAndFail(CaseContext& c, const VolumeModel& m, const Pods& pods,
                                const Sequence& failing, const Divergence& first,
                                const std::string& origin, const std::string& replay) {
  Divergence last = first;
  auto shrunk = model::Shrink(m, failing, first.step, [&](const Sequence& s) {
    auto d = RunFresh(c, m, pods, s, "shrinking");
    if (d) last = *d;
    return d ? std::optional<std::size_t>(d->step) : std::nullopt;
  });
  const Sequence& s = shrunk.confirmed ? shrunk.sequence : failing;
  const Divergence& d = shrunk.confirmed ? last : first;
  if (!shrunk.confirmed) RunFresh(c, m, pods, failing, "original failing sequence");
  std::ostringstream why;
  why << origin << " diverged from the model";
  if (shrunk.confirmed) {
    why << "; shrunk from " << failing.size() << " to " << s.size() << " step(s) in " << shrunk.runs
        << " run(s)";
  } else {
    why << "; the shrunk sequence did not fail again (flaky?), shown unshrunk";
  }
  why << ": " << model::SequenceName(s) << ". Step " << d.step + 1 << " ("
      << (d.step < s.size() ? model::ActionName(s[d.step]) : std::string("teardown"))
      << "): expected " << d.expected << ", got " << d.actual << ". Replay: " << replay;
  c.Fail(d.rule, why.str(), d.call);
}

void Exhaustive(CaseContext& c, const SequenceOptions& options) {
  const VolumeModel m = ModelFor(c);
  const Pods pods = PodsFor(c, m);
  const auto tour = model::TransitionTour(m, options.depth, options.walk_length);
  for (std::size_t i = 0; i < tour.walks.size(); ++i) {
    const auto& s = tour.walks[i];
    const std::string label =
        "walk " + std::to_string(i + 1) + " of " + std::to_string(tour.walks.size());
    if (auto d = RunFresh(c, m, pods, s, label)) {
      ShrinkAndFail(c, m, pods, s, *d, label + " (depth " + std::to_string(options.depth) + ")",
                    options.command + " --focus sequence/exhaustive --depth " +
                        std::to_string(options.depth));
    }
  }
  c.transcript().AddEvent("sequence/exhaustive", {{"depth", options.depth},
                                                  {"states", tour.states},
                                                  {"transitions", tour.transitions},
                                                  {"walks", tour.walks.size()},
                                                  {"steps", tour.steps}});
}

void Random(CaseContext& c, const SequenceOptions& options) {
  const VolumeModel m = ModelFor(c);
  const Pods pods = PodsFor(c, m);
  for (int i = 0; i < options.random_walks; ++i) {
    const auto seed = model::WalkSeed(options.seed, static_cast<std::size_t>(i));
    const auto walk = model::RandomWalk(m, options.walk_length, seed);
    const std::string label = "random walk " + std::to_string(i + 1) + " of " +
                              std::to_string(options.random_walks) + " (seed " +
                              std::to_string(seed) + ")";
    if (auto d = RunFresh(c, m, pods, walk, label)) {
      ShrinkAndFail(
          c, m, pods, walk, *d, label,
          options.command + " --focus sequence/random --random 1 --seed " + std::to_string(seed));
    }
  }
  c.transcript().AddEvent(
      "sequence/random",
      {{"walks", options.random_walks}, {"length", options.walk_length}, {"seed", options.seed}});
}

}  // namespace

void AddSequenceCases(std::vector<Case>& cases, const SequenceOptions& options) {
  const std::vector<std::string> modes = {"F9", "F10", "F11", "F12", "F18"};
  cases.push_back({"sequence/exhaustive",
                   {"sequence", "root", "slow"},
                   modes,
                   Always,
                   [options](CaseContext& c) { Exhaustive(c, options); },
                   /*nodes=*/2});
  cases.push_back({"sequence/random",
                   {"sequence", "root", "slow"},
                   modes,
                   Always,
                   [options](CaseContext& c) { Random(c, options); },
                   /*nodes=*/2});
}

}  // namespace flexkit::conform
