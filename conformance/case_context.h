#pragma once
// Everything one case works with: a fresh case directory, fresh nodes
// (mount namespaces) with the fixture's environment, the transcript, the
// tracker, unique names, and kubelet's steps (set up a pod volume, tear it
// down) made through the simulator's volume operations.
// Every driver call is checked against the rules that hold for any verb:
// one JSON document on combined output (F1-F3), exit code agreeing with
// Success (F4), no hang or held pipe (F16, F17), no secret in the output
// (F21), a stable Not supported (F7). Breaking one is recorded as a
// finding and the case goes on as kubelet would: a call kubelet cannot
// use fails its step, which kubelet retries; where the retry would be
// skipped (the target is already mounted, or gone) kubelet goes on, so does
// the case; where it would fail the same way forever, the case stops there.
// Controller-side verbs (attach, detach, isattached) of a profile with
// controller-managed attach run with the control plane's hostname and the
// node's PATH; only control_plane() adds the control plane's PATH (an
// empty directory, as in a distroless kube-controller-manager, unless the
// profile's controlPlanePath says otherwise).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "conformance/case_result.h"
#include "conformance/fixture.h"
#include "conformance/profile.h"
#include "conformance/tracker.h"
#include "simulator/driver_invoker.h"
#include "simulator/kubelet_paths.h"
#include "simulator/version_profile.h"
#include "simulator/volume_operations.h"
#include "simulator/volume_spec.h"

namespace flexkit::conform {

// Thrown to end a case with FAIL; `rule` names the F-number and reference.
struct CaseFailure : std::runtime_error {
  CaseFailure(std::string rule_broken, const std::string& what)
      : std::runtime_error(what), rule(std::move(rule_broken)) {}
  std::string rule;
  bool recorded = false;  // thrown by CaseContext::Fail, which recorded the finding
};
// Thrown to end a case with SKIP.
struct CaseSkip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A pod volume set up on a node, as kubelet has it.
struct PodVolume {
  sim::Node* node = nullptr;
  sim::VolumeSpec spec;
  sim::MountExtras pod;
  std::string attach_device;  // attachable drivers: attach's device ("" if none or Not supported)
  std::string device;         // attachable drivers: the device waitforattach gave mountdevice
  std::string global_path;    // attachable drivers: the device mount path
  std::string pod_dir;
  bool driver_mounted = true;  // false: kubelet's bind-mount fallback was used
  Tracker::Handle pod_undo = 0;
  std::string ownership_error;  // kubelet's fsGroup ownership change failed (it goes on)
};

// `text` with every `key` (a profile placeholder such as "{{unique}}")
// replaced by `value`.
std::string Substitute(std::string text, const std::string& key, const std::string& value);

// kubelet's own unmount (its fallback when the driver answers Not
// supported, and its clean-up): a transient EBUSY is retried (ten
// attempts, 100 ms apart), as kubelet retries on its next reconcile; any
// other error, and EBUSY after the last attempt, is thrown at once.
void KubeletUnmount(sim::Node& n, const std::string& dir);
// kubelet's non-recursive os.Remove after a successful unmount or
// unmountdevice: nothing when the driver removed the directory itself
// (cluster-facts §3); throws when it is still mounted or not empty.
void KubeletRemoveDir(sim::Node& n, const std::string& dir);

class CaseContext {
 public:
  // `nodes`: how many the case uses (Case::nodes); the profile's `nodes`
  // caps them.
  CaseContext(const DriverProfile& profile, std::string case_dir, std::string unique_prefix,
              int repeat, Fixture& fixture, sim::ProcessRunner& runner, int nodes);
  ~CaseContext();

  const DriverProfile& profile() const { return profile_; }
  const sim::VersionProfile& version() const { return *version_; }
  // kubelet's and the controller's operations as they make them: every
  // driver call held to the per-call rules (CheckReply), the controller's
  // verbs with the control plane's hostname.
  sim::VolumeOperations& ops() { return ops_; }
  // The same calls where kubelet never makes them (a probe of
  // robustness): their per-call findings are warnings, but a hang or a
  // held pipe (F16, F17), which wedges any caller.
  sim::VolumeOperations& beyond_kubelet() { return beyond_kubelet_ops_; }
  // The controller's verbs as a distroless kube-controller-manager runs
  // them (the control plane's PATH and hostname) whatever the profile's
  // attach management; with kubelet-managed attach their per-call findings
  // are warnings (the cluster never runs them there). Only the case about
  // that environment uses it: everywhere else the controller's calls run
  // with the node's PATH, so one missing tool does not hide the rest of
  // the driver from every case that attaches.
  sim::VolumeOperations& control_plane() { return control_plane_ops_; }
  // `init` of another copy of the driver (one the case installs).
  sim::CallResult InitCopy(sim::Node& n, const std::string& executable);
  // A call that must have succeeded: otherwise FAIL under the per-call rule
  // that failed it for kubelet, or `rule`.
  const sim::CallResult& Require(const sim::CallResult& r, const std::string& verb,
                                 const std::string& rule);
  // Who attaches and detaches: the controller, or kubelet with
  // kubelet-managed attach.
  sim::Component Attacher() const;
  // The per-call finding that made `r` fail for kubelet (its rule empty
  // when none did: the driver answered a well-formed Failure).
  Finding FailingFinding(const sim::CallResult& r) const;
  // Forgets the transcript's calls and the findings tied to them (a run of
  // many independent sequences keeps only the one it reports).
  void ClearTranscript();
  // From now on, call the driver as kubelet `kubernetes` (a simulator
  // version profile name) would: argv shapes and option keys (F22, F23).
  void UseKubernetes(const std::string& kubernetes);
  int repeat() const { return repeat_; }
  const std::string& case_dir() const { return case_dir_; }
  sim::Node& node(std::size_t i = 0);
  std::size_t node_count() const { return nodes_.size(); }
  Tracker& tracker() { return tracker_; }
  Fixture& fixture() { return fixture_; }
  sim::Transcript& transcript() { return transcript_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::chrono::milliseconds driver_time() const;
  // Whether the driver's isattached can witness where a volume is: it has
  // answered attached:false in this case, or does now of a volume never
  // attached anywhere (asked once per case, from `caller` as the controller
  // asks; a call kubelet never makes, so its findings are WARNs). If it
  // cannot, its attached:true says nothing (kubernetes' own e2e dummy
  // always answers true, and kubelet accepts it: the controller asks only
  // of volumes it believes attached): `claim`, what it said, is recorded as
  // a WARN saying `rule` is not judged from it, and this returns false.
  bool IsAttachedWitnesses(sim::Node& caller, const std::string& claim, const std::string& rule);

  std::string Unique(const std::string& stem);
  // The profile's test volume, "{{unique}}" substituted, named `name`.
  sim::VolumeSpec Volume(const std::string& name, bool read_only = false);
  sim::MountExtras Pod(const std::string& stem);
  sim::KubeletPaths Paths(const sim::Node& n) const;

  // Driver calls made by simulator components the case drives (a
  // sim::Cluster's kubelets and controller): give them this runner, which
  // searches each raw reply for the case's secrets, then call
  // CheckDrivenCalls after each step to hold every call recorded since to
  // the same rules as Call does.
  sim::ProcessRunner& DrivenRunner() { return driven_runner_; }
  void CheckDrivenCalls();
  // Whether the driven cluster's kubelets leave attach to the controller
  // (by default as the profile says).
  void SetDrivenControllerManagedAttach(bool by_controller) {
    driven_controller_attach_ = by_controller;
  }
  // The per-call settings for such components: one invoker serves every
  // verb, so the profile's longest deadline.
  sim::CallSettings DrivenCallSettings() const;
  // kubelet's path to a usable pod volume: attach (+waitforattach,
  // mountdevice) for attachable drivers, then mount or the bind-mount
  // fallback; each step registers its undo with the tracker.
  PodVolume SetUp(sim::Node& n, const sim::VolumeSpec& spec, const sim::MountExtras& pod);
  // kubelet's teardown of the pod dir: unmount (or the default unmount),
  // then rmdir, which must succeed (F11).
  void TearDownPod(PodVolume& v);
  // Registers TearDownPod of `pod_dir`, which the driver's mount set up
  // outside SetUp, with the tracker.
  void TrackPodTeardown(sim::Node& n, const std::string& pod_dir);
  // The attachable half of SetUp: attach (its detach registered with the
  // tracker) and waitforattach; returns node, spec, device and the global
  // path, created. Nothing is mounted yet.
  PodVolume AttachDevice(sim::Node& n, const sim::VolumeSpec& spec);
  // kubelet's teardown of the global path: unmountdevice (or the default
  // unmount) when it is a mount point, nothing left mounted (F11), rmdir.
  // `global_path`: the device mount path (a case may choose another).
  void UnmountDevice(sim::Node& n, const sim::VolumeSpec& spec, const std::string& global_path);
  // detach (by kubelet or the controller, as the profile says); must succeed (F12).
  void Detach(sim::Node& n, const sim::VolumeSpec& spec);

  void Warn(const std::string& warning);
  // A driver reply's warning (sim::Verdict::warnings) from `verb`: one line
  // per case however many calls drew it ("mount, unmount: key ...").
  void WarnOfCall(const std::string& verb, const std::string& warning);
  // Records that `rule` was broken and ends the case (FAIL). A `why` that
  // only restates a finding already recorded (a teardown error quoting it)
  // adds nothing.
  // `call`: the call the check judged (Finding::call); by default the latest.
  [[noreturn]] void Fail(const std::string& rule, const std::string& why,
                         std::optional<std::size_t> call = std::nullopt) const;
  // Records that `rule` was broken, judged on `call` (by default the latest
  // call); the case goes on.
  void Record(const std::string& rule, const std::string& why,
              std::optional<std::size_t> call = std::nullopt) const;
  // Takes back a finding recorded at or after `mark` (a findings().size())
  // for a failure the case then accepted: a driver's well-formed refusal
  // of a value it may refuse.
  void Withdraw(std::size_t mark, const std::string& rule, const std::string& why);
  // A check the harness made on node n that came out wrong (a write that
  // failed, or went through a read-only mount; a read that differs),
  // recorded in the transcript as an event "check" {node, check, path,
  // failed, outcome}, so reports draw it as a step of its own.
  void RecordCheck(const sim::Node& n, const std::string& check, const std::string& path,
                   const std::string& outcome);
  // Every rule broken so far, in order, each once.
  std::vector<Finding> findings() const;
  // True when `why` ends with the why of a recorded finding.
  bool Restates(const std::string& why) const;
  // The PATH controller-side verbs run with (cluster-facts §2): the
  // profile's controlPlanePath, or an empty directory under the case dir.
  std::string ControlPlanePath();
  [[noreturn]] void Skip(const std::string& why) const;

  // Secrets of this case (profile's plus any the case adds): redacted
  // everywhere and searched for in every reply.
  void AddSecret(const std::string& raw);
  // `text` with every secret of this case replaced by "<redacted>".
  std::string Redact(std::string text) const;
  // What Redact applies, for text made after the case is gone.
  sim::Redactor redactor() const;
  // The secrets only this case sent (they carry its unique prefix): a
  // file that holds one is the case's, whatever its name (leak_audit.h).
  std::vector<std::string> OwnSecrets() const;
  // How many mounts the node's namespace has at `target` (stacking shows).
  std::size_t MountCount(sim::Node& n, const std::string& target) const;
  // The options of the (topmost) mount at `target`, "" when none.
  std::string MountOptions(sim::Node& n, const std::string& target) const;

  // The operator's --root-dir: from now on Paths(n) builds n's pod and
  // global paths under `root` (which may hold any character a path can).
  void UseKubeletRoot(const sim::Node& n, const std::string& root);
  // `path` on node n as the harness reaches it (through the node's namespace).
  static std::string HostPath(const sim::Node& n, const std::string& path);
  // Whether `dir` on node `n` can be listed: a volume that cannot be
  // written but can be listed is read-only by design (informational files).
  static bool Listable(const sim::Node& n, const std::string& dir);
  // A fresh canary path under the case dir for `input` (what the hostile
  // value went into). After every driver call, Call FAILs when a canary
  // exists, naming the input that was executed.
  std::string Canary(const std::string& input);
  // "A Success is true": after `verb` answered Success, `target` is a mount
  // point in n's namespace and usable: a file written there reads back
  // (`read_only`: the directory lists). FAIL otherwise.
  void CheckMounted(sim::Node& n, const std::string& verb, const std::string& target,
                    bool read_only);
  // Whether a pod's volume is set up at `pod_dir` as kubelet sees it: a
  // mount point, or with podVolume: directory, the directory.
  bool PodVolumeSetUp(sim::Node& n, const std::string& pod_dir) const;

 private:
  // Searches each raw reply for the case's secrets; the first leak is kept.
  class SecretScanningRunner : public sim::ProcessRunner {
   public:
    explicit SecretScanningRunner(CaseContext& c) : c_(c) {}
    sim::ProcessResult Run(const sim::ProcessSpec& spec) override;

   private:
    CaseContext& c_;
  };

  // Probe storms: only a driver in a folder named as kubelet names them
  // (vendor~driver) has a folder of its own to watch; anything else (a
  // driver in /tmp, a build dir) would report its neighbours' changes.
  static bool IsPluginFolder(const std::string& executable);
  // Where every run directory goes: never watched, as flexconform writes there.
  std::string RunRoot() const;
  // Probe storms: what a call changed in the driver's own folder.
  void CheckPluginDir(const std::string& verb, const std::vector<std::string>& changes);
  void CheckCanaries(const std::string& verb) const;  // FAIL when a canary exists
  // How one call is made: on the control plane (its hostname), with the
  // control plane's PATH, with its per-call findings as warnings.
  struct CallMode {
    bool control_plane = false;
    bool control_plane_path = false;
    std::string warn_because;     // per-call findings are warnings, for this reason
    bool beyond_kubelet = false;  // a shape kubelet never calls
  };
  // The driver calls of ops() and beyond_kubelet(): through CheckedCall
  // in the mode each component's verb runs in.
  class ModeCaller : public sim::DriverCaller {
   public:
    // `in_control_plane`: every controller verb runs there, whatever the
    // profile's attach management.
    ModeCaller(CaseContext& c, bool beyond_kubelet, bool in_control_plane = false)
        : c_(c), beyond_kubelet_(beyond_kubelet), in_control_plane_(in_control_plane) {}
    sim::CallResult Call(const sim::DriverCall& call) override;

   private:
    CaseContext& c_;
    bool beyond_kubelet_;
    bool in_control_plane_;
  };
  // attach as the profile's attacher makes it (its detach tracked); the
  // device it gave ("" for none or Not supported).
  std::string Attach(sim::Node& n, const sim::VolumeSpec& spec);
  void JudgeFailedMountDevice(sim::Node& n, const sim::Step& md, const std::string& global,
                              const std::string& device);
  void JudgeFailedSetUp(sim::Node& n, const sim::Step& mount, const PodVolume& v);
  // A failed step of SetUp or a teardown: the per-call finding of its
  // failing call ends the case when there is one, otherwise `rule` with
  // `why`.
  [[noreturn]] void FailStep(const sim::Step& step, const std::string& rule,
                             const std::string& why);
  // One call with the per-verb deadline, held to the per-call rules; the
  // finding that made it fail for kubelet, if any, is kept for
  // FailingFinding.
  sim::CallResult CheckedCall(sim::Node& n, const sim::Args& args, const std::string& component,
                              const std::string& executable, CallMode mode);
  // The rules every reply is held to (F1-F4, F7, F16, F17, F21, F27): each
  // broken one is recorded; returns the one that fails the call for kubelet.
  // After any mount or mountdevice that answered Success: its target is a
  // mount point (or, with podVolume: directory, exists); a finding
  // otherwise, which fails the call.
  Finding CheckSuccessIsTrue(sim::Node& n, const sim::Args& args);
  Finding CheckReply(const std::string& verb, const std::string& harness_problem,
                     const std::string& spawn_error, const std::string& raw_output,
                     const sim::Verdict& verdict, CallMode mode);
  bool HasSecret(const std::string& raw_output) const;  // a secret of the case, raw or base64
  void RecordSecretLeak(const std::string& verb) const;
  // After a teardown step kubelet would retry forever: the harness unmounts
  // and removes `dir` itself (an event in the transcript), so the leak
  // audit does not repeat the finding.
  void AbandonTeardown(sim::Node& n, const std::string& dir);

  const DriverProfile& profile_;
  const sim::VersionProfile* version_;
  std::string case_dir_;
  std::string unique_prefix_;
  int repeat_;
  Fixture& fixture_;
  sim::ProcessRunner& runner_;
  sim::Transcript transcript_;
  sim::Redactor redactor_;
  std::vector<std::string> secrets_;
  int declared_nodes_;
  std::vector<std::unique_ptr<sim::Node>> nodes_;
  Tracker tracker_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> first_answer_;  // verb -> "not_supported" or "supported"
  std::vector<std::string> warnings_;
  // A reply's warning once per case, naming every verb that drew it.
  struct CallWarning {
    std::size_t at;  // in warnings_
    std::vector<std::string> verbs;
  };
  std::map<std::string, CallWarning> call_warnings_;
  // Driven calls: (node, options JSON) of each attach that gave a device.
  std::set<std::pair<std::string, std::string>> driven_attached_with_device_;
  std::optional<bool> driven_controller_attach_;
  mutable std::vector<Finding> findings_;
  std::string control_plane_path_;
  std::atomic<long long> counter_{0};
  std::atomic<long long> driver_time_ms_{0};
  std::atomic<bool> isattached_said_false_{false};
  std::atomic<bool> isattached_probed_{false};
  SecretScanningRunner driven_runner_{*this};
  ModeCaller kubelet_caller_{*this, false};
  ModeCaller beyond_kubelet_caller_{*this, true};
  ModeCaller control_plane_caller_{*this, false, true};
  sim::VolumeOperations ops_;
  sim::VolumeOperations beyond_kubelet_ops_;
  sim::VolumeOperations control_plane_ops_;
  std::map<std::size_t, Finding> failing_by_record_;  // transcript call -> per-call finding
  std::string driven_leak_;             // the verb of the first driven call that leaked a secret
  std::string driven_plugin_dir_verb_;  // the first driven call that changed its plugin folder
  std::vector<std::string> driven_plugin_dir_changes_;
  std::size_t driven_checked_ = 0;                    // transcript calls CheckDrivenCalls has seen
  std::map<std::string, std::string> kubelet_roots_;  // node name -> --root-dir
  std::vector<std::pair<std::string, std::string>> canaries_;  // path, input
};

}  // namespace flexkit::conform
