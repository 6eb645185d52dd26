// The harness of the [failover] cases (catalog_failover.cc): the
// simulator's cluster over a case's two nodes, A (the node that fails) and
// B, with kubelet on each and the attach/detach controller on a control
// plane, one volume as an RWO PersistentVolume or inline, and the checks
// every case makes: data written on one node read back on another, where
// the backend (or, without an `attachments` hook, the driver's own
// isattached) says the volume is attached, and which driver calls the
// cluster made. The tracker's undo tears the cluster down and requires
// that nothing stays set up or attached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conformance/case_context.h"
#include "simulator/cluster.h"

namespace flexkit::conform::failover {

inline constexpr const char* kF14 =
    "F14 follows-pod: a volume follows its pod safely, attached to one node at a time";
inline constexpr const char* kF12 =
    "F12 late-detach: a late detach succeeds and touches only its node";

// Who attaches: the controller (attachManagement: controller) or each
// node's kubelet.
enum class Attacher { kController, kKubelet };
std::string AttacherName(Attacher a);

// Errors as one line; "no error reported" when there are none.
std::string Joined(const std::vector<std::string>& lines);
// What a call said about its failure: the harness's problem, the reply's
// message, or the judge's error.
std::string MessageOf(const sim::CallRecord& r);

// Shared: the tracker's undo keeps it alive after the case function ends
// (the runner unwinds after a FAIL, when the case's stack is gone).
class Failover : public std::enable_shared_from_this<Failover> {
 public:
  // Skips the case when the profile has fewer than two nodes.
  static std::shared_ptr<Failover> Make(CaseContext& c, Attacher attacher, bool rwo_pv);
  Failover(CaseContext& c, Attacher attacher, bool rwo_pv);

  sim::Node& a() { return a_; }
  sim::Node& b() { return b_; }

  // A pod using the case's volume, bound to `n`, created; the cluster
  // settles in at most `rounds`.
  sim::Pod Schedule(sim::Node& n, int rounds = 8);
  // Schedule, and the pod must have its volume mounted.
  sim::Pod Place(sim::Node& n);
  void Delete(const sim::Pod& pod) { cluster_->DeletePod(pod.ns, pod.name); }

  // kubelets and the controller until nothing changes; every call they made
  // is held to the universal rules.
  // The cluster's rounds until nothing changes; then, with kubelet-managed
  // attach, what a kubelet left attached (a volume it reconstructed) is
  // detached as an operator would, and the cluster settles again.
  std::vector<std::string> Settle(int rounds = 8);
  std::vector<std::string> Advance(sim::Clock::Duration d, int rounds = 8);
  // The controller's maxWaitForUnmountDuration: past it, an unhealthy
  // node's attachments are force-detached.
  std::vector<std::string> WaitForForceDetach(int rounds = 8);
  // What the last settle's kubelets and controller reported.
  const std::vector<std::string>& last_errors() const { return last_errors_; }

  // Whether `n`'s kubelet still has the volume set up (device or pods).
  bool SetUpOn(const sim::Node& n);
  // Whether the pod's kubelet has it set up and its dir is a mount point.
  bool Mounted(const sim::Pod& pod);
  void RequireMounted(const sim::Pod& pod, const std::string& rule, const std::string& when);
  std::string PodDir(const sim::Pod& pod);
  // Whom the controller believes the volume is attached to, uncertain
  // attachments included.
  std::vector<std::string> ControllerAttachments();

  // The driver calls with `verb` made for `node` (attach, detach and
  // isattached name it in their arguments; others run on it) since `from`.
  std::vector<sim::CallRecord> CallsFor(const std::string& verb, const sim::Node& node,
                                        std::size_t from = 0);
  std::size_t CallCount() { return c_.transcript().Calls().size(); }

  // The pod writes `count` files through its volume; each is fsynced
  // unless `synced` is false (then only a clean unmount saves it). Returns
  // their checksums, which CheckFiles also expects from now on. A volume
  // read-only by design skips the case.
  std::map<std::string, std::uint64_t> WriteFiles(const sim::Pod& pod, const std::string& stem,
                                                  int count, bool synced = true);
  // Every file written so far (or of `sums`) reads back with its checksum.
  void CheckFiles(const sim::Pod& pod, const std::string& rule);
  void CheckFiles(const sim::Pod& pod, const std::string& rule,
                  const std::map<std::string, std::uint64_t>& sums);
  // The pod still has its volume mounted, reads what was written, and can
  // write and read back more.
  void CheckUsable(const sim::Pod& pod, const std::string& rule, const std::string& stem);
  // Every regular file in the pod's volume now, with its checksum.
  std::map<std::string, std::uint64_t> Files(const sim::Pod& pod);

  // The backend has every volume attached to `node` only (or nowhere when
  // `node` is null), and never had one attached twice.
  void CheckBackend(const sim::Node* node, const std::string& when);
  // While the pod recreated on B waits for its volume, the volume is with
  // the dead A or already taken over by B (a backend may hand a stopped
  // instance's attachment to B before B's mount runs): one of them, never
  // both. Which one is a matter of timing, not of the driver's correctness.
  void CheckBackendWithAOrB(const std::string& when) { CheckBackendOwner({&a_, &b_}, when); }

  // Every process in the node killed, its daemon too; the fixture tells
  // the backend (a stopped instance).
  void Crash(sim::Node& n);
  // New namespace, the instance and daemon running again, and kubelet
  // reconstructing what it had (it calls the driver at the next settle).
  void Restart(sim::Node& n);
  // Cut off: the node's daemon hangs, the controller sees the node
  // unhealthy, and its kubelet cannot see the API server (no syncs).
  void Partition(sim::Node& n, bool cut);

 private:
  // The operator's detach of what a kubelet left attached; true if any.
  bool DetachWhatKubeletLeft();
  using Owners = std::vector<const sim::Node*>;

  // The cluster over the case's nodes (their backends already run there),
  // the driver installed in every plugin dir, the volume as an RWO
  // PersistentVolume or inline, and the undo that tears everything down.
  void Start();
  // Every node back up and reachable, every pod deleted, the cluster
  // settled: nothing may stay mounted or attached.
  void TearDown();
  // Every volume attached to exactly one of `expected` (nowhere when
  // empty); under accessMode ReadWriteMany, to one or more of them or of
  // the nodes the controller has not detached it from yet.
  void CheckBackendOwner(const Owners& expected, const std::string& when);
  // No backend record: the driver's isattached, asked for every node as
  // the controller asks (from the control plane, so a dead node is asked
  // about too; with kubelet-managed attach, each running node about
  // itself), must name one of `owners` alone (ReadWriteMany: only owners,
  // several at once allowed). Not supported or a Failure (unknown) says
  // nothing.
  void Witness(const Owners& owners, const std::string& when);

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

}  // namespace flexkit::conform::failover
