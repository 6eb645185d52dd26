#include "conformance/case_context.h"

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include "conformance/plugin_dir_watch.h"
#include "simulator/mount_table.h"
#include "simulator/options_builder.h"
#include "simulator/verdict_json.h"

namespace flexkit::conform {
std::string Substitute(std::string text, const std::string& key, const std::string& value) {
  for (std::size_t pos = text.find(key); pos != std::string::npos;
       pos = text.find(key, pos + value.size())) {
    text.replace(pos, key.size(), value);
  }
  return text;
}

namespace {

std::string Verb(const sim::Args& args) { return args.empty() ? "" : args[0]; }

// Keeps the unredacted output of one call: the transcript only holds the
// redacted copy, and secrets must be searched for in what the driver wrote.
// A call in the control plane gets its PATH and its hostname (a driver
// that keys attach on `hostname` rather than the node it is given names
// the control plane there, as in a cluster).
class CapturingRunner : public sim::ProcessRunner {
 public:
  CapturingRunner(sim::ProcessRunner& inner, std::string path)
      : inner_(inner), path_(std::move(path)) {}
  sim::ProcessResult Run(const sim::ProcessSpec& spec) override {
    if (path_.empty()) {
      last_ = inner_.Run(spec);
    } else {
      sim::ProcessSpec in_control_plane = spec;
      in_control_plane.env_overrides["PATH"] = path_;
      in_control_plane.hostname = sim::kControlPlaneName;
      last_ = inner_.Run(in_control_plane);
    }
    return last_;
  }
  const sim::ProcessResult& last() const { return last_; }

 private:
  sim::ProcessRunner& inner_;
  std::string path_;
  sim::ProcessResult last_;
};

// The shells' words for a command missing from PATH: dash's "jq: not
// found", bash's "jq: command not found", env's "No such file or directory".
bool ShellFoundNoCommand(const std::string& output) {
  return output.find(": not found") != std::string::npos ||
         output.find("command not found") != std::string::npos ||
         (output.find("env: ") != std::string::npos &&
          output.find("No such file or directory") != std::string::npos);
}

bool ControllerVerb(const std::string& verb) {
  return verb == "attach" || verb == "detach" || verb == "isattached";
}

sim::CallSettings SettingsWithDeadline(sim::Millis deadline) {
  sim::CallSettings settings;
  settings.harness_deadline = deadline;
  // kubelet's own waitforattach timer stays longer than the harness's, so a
  // stuck waitforattach is reported by the harness with the call's output.
  settings.waitforattach_timeout = deadline * 2;
  settings.kill_grace = std::chrono::seconds(1);
  return settings;
}

std::string Why(const sim::CallResult& r) {
  if (!r.harness_problem.empty()) return r.harness_problem;
  return std::string(sim::OutcomeName(r.verdict.outcome)) +
         (r.verdict.error.empty() ? "" : ": " + r.verdict.error);
}

}  // namespace

CaseContext::CaseContext(const DriverProfile& profile, std::string case_dir,
                         std::string unique_prefix, int repeat, Fixture& fixture,
                         sim::ProcessRunner& runner, int nodes)
    : profile_(profile),
      version_(&sim::FindProfile(profile.kubernetes)),
      argv_(*version_),
      case_dir_(std::move(case_dir)),
      unique_prefix_(std::move(unique_prefix)),
      repeat_(repeat),
      fixture_(fixture),
      runner_(runner),
      declared_nodes_(nodes) {
  for (const auto& [key, value] : profile_.secrets) AddSecret(value);
  for (int i = 1; i <= std::min(nodes, profile_.nodes); ++i) {
    const std::string name = "node-" + std::to_string(i);
    auto env = fixture_.NodeEnv(name, case_dir_);
    for (const auto& [key, value] : profile_.node_env) {
      env[key] = Substitute(Substitute(value, "{{node}}", name), "{{case_dir}}", case_dir_);
    }
    // On a live node the driver talks to the real backend, which knows the
    // machine by its real hostname.
    const auto hostname = profile_.live_node_scratch.empty() ? sim::NodeHostname::kNodeName
                                                             : sim::NodeHostname::kHost;
    nodes_.push_back(std::make_unique<sim::Node>(
        name, case_dir_, env, std::make_unique<sim::ProcessNamespaceHolder>(hostname)));
  }
}

CaseContext::~CaseContext() = default;

sim::Node& CaseContext::node(std::size_t i) {
  if (i >= static_cast<std::size_t>(declared_nodes_)) {
    throw std::logic_error("the case uses node " + std::to_string(i + 1) + " but declares " +
                           std::to_string(declared_nodes_) + " (Case::nodes)");
  }
  if (i >= nodes_.size()) {
    Skip("needs " + std::to_string(i + 1) + " nodes; the profile has " +
         std::to_string(nodes_.size()));
  }
  return *nodes_[i];
}

std::chrono::milliseconds CaseContext::driver_time() const {
  return std::chrono::milliseconds(driver_time_ms_.load());
}

std::string CaseContext::Unique(const std::string& stem) {
  return stem + "-" + unique_prefix_ + "-" + std::to_string(++counter_);
}

sim::VolumeSpec CaseContext::Volume(const std::string& name, bool read_only) {
  sim::VolumeSpec spec;
  spec.name = name;
  spec.driver = profile_.driver_name;
  spec.read_only = read_only;
  if (!profile_.fs_types.empty()) spec.fs_type = profile_.fs_types.front();
  for (const auto& [key, value] : profile_.volume_options) {
    spec.options[key] = Substitute(value, "{{unique}}", name);
  }
  return spec;
}

void CaseContext::UseKubernetes(const std::string& kubernetes) {
  version_ = &sim::FindProfile(kubernetes);
  argv_ = sim::ArgvBuilder(*version_);
}

sim::MountExtras CaseContext::Pod(const std::string& stem) {
  sim::MountExtras pod;
  pod.pod_name = Unique(stem);
  pod.pod_namespace = "default";
  pod.pod_uid = Unique("uid");
  pod.secret = profile_.secrets;
  return pod;
}

std::string CaseContext::Json(const sim::VolumeSpec& spec, const sim::MountExtras* pod) const {
  return sim::OptionsJson(*version_, spec, pod);
}

sim::KubeletPaths CaseContext::Paths(const sim::Node& n) const {
  std::lock_guard lock(mutex_);
  auto it = kubelet_roots_.find(n.name());
  return sim::KubeletPaths(it == kubelet_roots_.end() ? n.kubelet_root() : it->second,
                           profile_.driver_name);
}

void CaseContext::UseKubeletRoot(const sim::Node& n, const std::string& root) {
  std::lock_guard lock(mutex_);
  kubelet_roots_[n.name()] = root;
}

bool CaseContext::Listable(const sim::Node& n, const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator listed(HostPath(n, dir), ec);
  return !ec;
}

std::string CaseContext::HostPath(const sim::Node& n, const std::string& path) {
  return "/proc/" + std::to_string(n.holder_pid()) + "/root" + path;
}

std::string CaseContext::Canary(const std::string& input) {
  const std::string dir = case_dir_ + "/canaries";
  std::filesystem::create_directories(dir);
  std::lock_guard lock(mutex_);
  const std::string path = dir + "/pwned-" + std::to_string(canaries_.size() + 1);
  canaries_.emplace_back(path, input);
  return path;
}

void CaseContext::CheckCanaries(const std::string& verb) const {
  std::vector<std::pair<std::string, std::string>> canaries;
  {
    std::lock_guard lock(mutex_);
    canaries = canaries_;
  }
  for (const auto& [path, input] : canaries) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      Fail("F24 (protocol §4: option values, secrets and paths are data, never code)",
           verb + ": the driver executed part of " + input + " (canary " + path + " appeared)");
    }
  }
}

void CaseContext::CheckMounted(sim::Node& n, const std::string& verb, const std::string& target,
                               bool read_only) {
  constexpr const char* kRule = "protocol §3: a Success is true (the mount exists and is usable)";
  const bool directory = verb == "mount" && profile_.pod_volume_is_directory;
  if (directory && !n.filesystem().PathExists(target)) {
    RecordCheck(n, "directory", target, "missing");
    Fail(kRule, verb + " answered Success but " + target + " is gone (podVolume: directory)");
  }
  if (!directory && !n.filesystem().IsMountPoint(target)) {
    RecordCheck(n, "mount point", target, "not a mount point");
    Fail(kRule, verb + " answered Success but " + target + " is not a mount point");
  }
  std::error_code ec;
  const std::string real = HostPath(n, target);
  if (read_only) {
    std::filesystem::directory_iterator it(real, ec);
    if (ec) {
      RecordCheck(n, "read", target, ec.message());
      Fail(kRule, verb + " answered Success but " + target + " cannot be read: " + ec.message());
    }
    return;
  }
  const std::string probe = target + "/.flexconform-probe-" + std::to_string(++counter_);
  const std::string content = "flexconform probe\n";
  std::string back;
  try {
    n.filesystem().WriteFile(probe, content);
    back = n.filesystem().ReadFile(probe);
  } catch (const std::exception& e) {
    std::filesystem::remove(HostPath(n, probe), ec);
    // A filesystem read-only by design (informational files) still serves
    // the pod: a WARN, while one that cannot even be listed FAILs.
    if (!Listable(n, target)) {
      RecordCheck(n, "write", probe, e.what());
      Fail(kRule, verb + " answered Success but " + target + " is not usable: " + e.what());
    }
    Warn(verb + ": " + target + " is mounted but not writable: " + e.what());
    return;
  }
  std::filesystem::remove(HostPath(n, probe), ec);
  if (back != content) {
    RecordCheck(n, "read back", probe, "read back '" + back + "'");
    Fail(kRule,
         verb + " answered Success but a file written in " + target + " read back '" + back + "'");
  }
}

void CaseContext::AddSecret(const std::string& raw) {
  std::lock_guard lock(mutex_);
  if (raw.empty()) return;
  redactor_.AddSecret(raw);
  secrets_.push_back(raw);
  secrets_.push_back(sim::Base64(raw));
}

sim::Redactor CaseContext::redactor() const {
  std::lock_guard lock(mutex_);
  return redactor_;
}

std::string CaseContext::Redact(std::string text) const {
  std::lock_guard lock(mutex_);
  return redactor_.Apply(std::move(text));
}

void CaseContext::Warn(const std::string& warning) {
  std::lock_guard lock(mutex_);
  for (const auto& w : warnings_) {
    if (w == warning) return;
  }
  warnings_.push_back(warning);
}

void CaseContext::Record(const std::string& rule, const std::string& why,
                         std::optional<std::size_t> call) const {
  std::lock_guard lock(mutex_);
  for (const auto& f : findings_) {
    if (f.rule == rule && f.why == why) return;
  }
  // The check just failed judged the latest call: its reply, or what it
  // left on the node.
  Finding finding{Grade::kFail, rule, why, call};
  if (const std::size_t calls = transcript_.Calls().size(); !call && calls > 0)
    finding.call = calls - 1;
  findings_.push_back(std::move(finding));
}

void CaseContext::RecordCheck(const sim::Node& n, const std::string& check, const std::string& path,
                              const std::string& outcome) {
  transcript_.AddEvent("check", {{"node", n.name()},
                                 {"check", check},
                                 {"path", Redact(path)},
                                 {"failed", true},
                                 {"outcome", Redact(outcome)}});
}

bool CaseContext::Restates(const std::string& why) const {
  std::lock_guard lock(mutex_);
  for (const auto& f : findings_) {
    if (!f.why.empty() && why.size() >= f.why.size() &&
        why.compare(why.size() - f.why.size(), std::string::npos, f.why) == 0)
      return true;
  }
  return false;
}

void CaseContext::Fail(const std::string& rule, const std::string& why,
                       std::optional<std::size_t> call) const {
  if (!Restates(why)) Record(rule, why, call);
  CaseFailure failure(rule, why);
  failure.recorded = true;
  throw failure;
}

std::vector<Finding> CaseContext::findings() const {
  std::lock_guard lock(mutex_);
  return findings_;
}

std::string CaseContext::ControlPlanePath() {
  std::lock_guard lock(mutex_);
  if (control_plane_path_.empty()) {
    if (!profile_.control_plane_path.empty()) {
      control_plane_path_ = profile_.control_plane_path;
    } else {
      // distroless: no shell, no coreutils, no jq; nothing to find on PATH.
      control_plane_path_ = case_dir_ + "/control-plane-bin";
      std::filesystem::create_directories(control_plane_path_);
    }
    transcript_.AddEvent("control plane environment",
                         {{"PATH", control_plane_path_},
                          {"why",
                           "kube-controller-manager runs attach, detach and isattached "
                           "from a distroless image (cluster-facts §2)"}});
  }
  return control_plane_path_;
}

void CaseContext::Skip(const std::string& why) const { throw CaseSkip(why); }

bool CaseContext::PodVolumeSetUp(sim::Node& n, const std::string& pod_dir) const {
  if (n.filesystem().IsMountPoint(pod_dir)) return true;
  return profile_.pod_volume_is_directory && n.filesystem().PathExists(pod_dir);
}

std::size_t CaseContext::MountCount(sim::Node& n, const std::string& target) const {
  return sim::MountCountAt(*n.Mounts(), target);
}

std::string CaseContext::MountOptions(sim::Node& n, const std::string& target) const {
  return sim::TopmostOptionsAt(*n.Mounts(), target);
}

sim::CallResult CaseContext::Call(sim::Node& n, const sim::Args& args, const std::string& component,
                                  const std::string& executable) {
  return CheckedCall(n, args, component, executable).result;
}

sim::CallResult CaseContext::CallInControlPlane(sim::Node& n, const sim::Args& args,
                                                bool as_warnings) {
  return CheckedCall(n, args, "controller", "", CallMode{true, as_warnings}).result;
}

sim::CallResult CaseContext::CallKubeletNeverMakes(sim::Node& n, const sim::Args& args) {
  CallMode mode;
  mode.beyond_kubelet = true;
  return CheckedCall(n, args, "kubelet", "", mode).result;
}

CaseContext::Checked CaseContext::CheckedCall(sim::Node& n, const sim::Args& args,
                                              const std::string& component,
                                              const std::string& executable) {
  // The controller runs these verbs only when attach is controller-managed;
  // otherwise kubelet does, with kubelet's environment.
  CallMode mode;
  mode.control_plane =
      component == "controller" && !profile_.kubelet_managed_attach && ControllerVerb(Verb(args));
  return CheckedCall(n, args, component, executable, mode);
}

CaseContext::Checked CaseContext::CheckedCall(sim::Node& n, const sim::Args& args,
                                              const std::string& component,
                                              const std::string& executable, CallMode mode) {
  const std::string verb = Verb(args);
  CapturingRunner capturing(runner_, mode.control_plane ? ControlPlanePath() : "");
  sim::DriverInvoker invoker(capturing, transcript_,
                             SettingsWithDeadline(profile_.TimeoutFor(verb)));
  sim::Redactor redactor;
  std::vector<std::string> secrets;
  {
    std::lock_guard lock(mutex_);
    redactor = redactor_;
    secrets = secrets_;
  }
  const std::string exe = executable.empty() ? profile_.driver : executable;
  // Another executable is a copy the case itself is installing (the
  // install case), whose folder changes because of the case.
  std::optional<PluginDirWatch> plugin_dir;
  if (exe == profile_.driver && IsPluginFolder(exe))
    plugin_dir.emplace(std::filesystem::path(exe).parent_path().string(), RunRoot());
  sim::CallResult r = invoker.Call(n, component, exe, args, redactor);
  const sim::ProcessResult& process = capturing.last();
  driver_time_ms_ += process.duration.count();
  if (verb == "isattached" && r.ok() && r.verdict.status && !r.verdict.status->attached)
    isattached_said_false_ = true;
  CheckCanaries(verb);
  Finding failing =
      CheckReply(verb, r.harness_problem, process.spawn_error, process.combined, r.verdict, mode);
  if (plugin_dir) CheckPluginDir(verb, plugin_dir->Changes());
  return {r, failing};
}

bool CaseContext::IsAttachedWitnesses(sim::Node& caller, const std::string& claim,
                                      const std::string& rule) {
  if (!isattached_said_false_ && !isattached_probed_.exchange(true)) {
    const sim::VolumeSpec never = Volume(Unique("never-attached"));
    CallMode mode;
    mode.control_plane = !profile_.kubelet_managed_attach;
    mode.beyond_kubelet = true;
    CheckedCall(caller, argv_.IsAttached(Json(never), caller.name()), "controller", "", mode);
  }
  if (isattached_said_false_) return true;
  Warn(claim + ", but isattached has never answered attached:false in this case: it tells " +
       "nothing of where the volume is, so " + rule + " is not judged from it");
  return false;
}

bool CaseContext::IsPluginFolder(const std::string& executable) {
  const std::string folder = std::filesystem::path(executable).parent_path().filename().string();
  return folder.find('~') != std::string::npos;
}

std::string CaseContext::RunRoot() const {
  return std::filesystem::path(case_dir_).parent_path().parent_path().string();
}

// A per-call rule: kubelet still uses the reply, but re-probes the driver.
void CaseContext::CheckPluginDir(const std::string& verb, const std::vector<std::string>& changes) {
  if (changes.empty()) return;
  std::string list;
  for (const auto& c : changes) list += (list.empty() ? "" : ", ") + c;
  Record(
      "probe storm (protocol §1.3: any change in the driver's folder makes kubelet re-run init "
      "and drop its Not-supported cache; kubernetes#58352)",
      verb + " changed the driver's own folder: " + list +
          ". Keep logs and state outside the plugin dir, or under a dot-name");
}

Finding CaseContext::CheckReply(const std::string& verb, const std::string& harness_problem,
                                const std::string& spawn_error, const std::string& raw_output,
                                const sim::Verdict& verdict, CallMode mode) {
  Finding failing;
  auto found = [&](std::string rule, std::string why, bool fails_the_call) {
    const bool hang = rule.rfind("F16", 0) == 0 || rule.rfind("F17", 0) == 0;
    if (mode.beyond_kubelet && !hang) {
      Warn(why + " [" + rule + "; a WARN: kubelet never makes this call]");
    } else if (mode.as_warnings) {
      Warn(why + " [" + rule + "; a WARN: the profile says kubelet-managed attach]");
    } else {
      Record(rule, why);
    }
    if (fails_the_call && failing.rule.empty()) failing = {Grade::kFail, rule, why};
  };
  if (!harness_problem.empty()) {
    found(harness_problem.find("stdout/stderr open") != std::string::npos
              ? "F17 (protocol §3: kubelet reads combined output to end of file)"
              : "F16 (protocol §3: no timeout but waitforattach's; a hang wedges kubelet)",
          verb + ": " + harness_problem, true);
  }
  if (!spawn_error.empty()) {
    found("F27 (protocol §1: the driver must be executable)",
          verb + ": exec failed: " + spawn_error, true);
  }
  // kubelet uses a reply that leaks a secret: the case goes on.
  if (HasSecret(raw_output)) RecordSecretLeak(verb);
  if (harness_problem.empty() && verdict.outcome == sim::Outcome::kDecodeError) {
    const std::string why =
        verb +
        (mode.control_plane ? ", run as the controller runs it (PATH=" + ControlPlanePath() + ")"
                            : std::string()) +
        ": kubelet cannot decode the reply: " + verdict.error;
    // In the control plane a tool the shell cannot find breaks the reply
    // (cluster-facts §2); any other stray output breaks it as on a node.
    if (mode.control_plane && ShellFoundNoCommand(raw_output)) {
      found("F2 (cluster-facts §2: kube-controller-manager has no shell tools, a minimal PATH)",
            why, true);
    } else {
      found("F1/F2/F3 (protocol §3: combined output must be exactly one JSON document)", why, true);
    }
  }
  if (verdict.outcome == sim::Outcome::kFailure && verdict.status &&
      verdict.status->status == "Success") {
    found("F4 (protocol §3.2: Success with a non-zero exit is an error to kubelet)",
          verb + ": \"Success\" with " + verdict.error, true);
  }
  for (const auto& w : verdict.warnings) Warn(verb + ": " + w);

  std::string before;
  const std::string answer =
      verdict.outcome == sim::Outcome::kNotSupported ? "not_supported" : "supported";
  {
    std::lock_guard lock(mutex_);
    auto [it, first] = first_answer_.emplace(verb, answer);
    if (!first && it->second != answer) before = it->second;
  }
  // kubelet would have kept answering from its cache: the case goes on.
  if (!before.empty()) {
    found("F7 (protocol §3.2: kubelet caches Not supported for the plugin's lifetime)",
          verb + ": answered " + (answer == "supported" ? "" : "Not supported ") + "now but " +
              (before == "supported" ? "something else" : "Not supported") + " before",
          false);
  }
  return failing;
}

bool CaseContext::HasSecret(const std::string& raw_output) const {
  std::lock_guard lock(mutex_);
  for (const auto& s : secrets_) {
    if (s.size() >= 4 && raw_output.find(s) != std::string::npos) return true;
  }
  return false;
}

void CaseContext::RecordSecretLeak(const std::string& verb) const {
  Record("F21 (protocol §8: secrets never appear in replies or logs)",
         verb + ": the reply contains a secret value (shown redacted in the transcript)");
}

sim::ProcessResult CaseContext::SecretScanningRunner::Run(const sim::ProcessSpec& spec) {
  std::optional<PluginDirWatch> plugin_dir;
  if (IsPluginFolder(spec.executable))
    plugin_dir.emplace(std::filesystem::path(spec.executable).parent_path().string(), c_.RunRoot());
  sim::ProcessResult result = c_.runner_.Run(spec);
  c_.driver_time_ms_ += result.duration.count();
  const std::string verb = spec.args.empty() ? "a call" : spec.args[0];
  auto changes = plugin_dir ? plugin_dir->Changes() : std::vector<std::string>{};
  const bool leaked = c_.HasSecret(result.combined);  // takes mutex_ itself
  std::lock_guard lock(c_.mutex_);
  if (leaked && c_.driven_leak_.empty()) c_.driven_leak_ = verb;
  if (!changes.empty() && c_.driven_plugin_dir_changes_.empty()) {
    c_.driven_plugin_dir_verb_ = verb;
    c_.driven_plugin_dir_changes_ = std::move(changes);
  }
  return result;
}

void CaseContext::CheckDrivenCalls() {
  std::string leak, touched_by;
  std::vector<std::string> touched;
  {
    std::lock_guard lock(mutex_);
    leak = driven_leak_;
    touched_by = driven_plugin_dir_verb_;
    touched = driven_plugin_dir_changes_;
  }
  if (!leak.empty()) RecordSecretLeak(leak);
  CheckPluginDir(touched_by, touched);
  CheckCanaries("a driven call");
  const auto calls = transcript_.Calls();
  for (; driven_checked_ < calls.size(); ++driven_checked_) {
    const sim::CallRecord& r = calls[driven_checked_];
    if (r.answered_from_cache) continue;
    // The raw output was searched for secrets above, or by Call.
    CheckReply(r.verb, r.harness_problem, r.process.spawn_error, "", r.verdict, CallMode{});
  }
}

sim::CallSettings CaseContext::DrivenCallSettings() const {
  sim::Millis longest = profile_.default_timeout;
  for (const auto& [verb, timeout] : profile_.verb_timeouts) longest = std::max(longest, timeout);
  return SettingsWithDeadline(longest);
}

void CaseContext::FailStep(const Checked& c, const std::string& rule, const std::string& why) {
  if (!c.failing.rule.empty()) Fail(c.failing.rule, c.failing.why);
  Fail(rule, why);
}

sim::CallResult CaseContext::Require(sim::Node& n, const sim::Args& args, const std::string& rule,
                                     const std::string& component, const std::string& executable) {
  auto c = CheckedCall(n, args, component, executable);
  if (!c.result.ok()) FailStep(c, rule, Verb(args) + " must succeed, got " + Why(c.result));
  return c.result;
}

PodVolume CaseContext::SetUp(sim::Node& n, const sim::VolumeSpec& spec,
                             const sim::MountExtras& pod) {
  PodVolume v;
  v.node = &n;
  v.spec = spec;
  v.pod = pod;
  auto paths = Paths(n);
  const std::string json = Json(spec);
  if (profile_.attachable()) {
    const PodVolume attached = AttachDevice(n, spec);
    v.attach_device = attached.attach_device;
    v.device = attached.device;
    v.global_path = attached.global_path;
    bool driver_mounted_device = false;
    if (!n.filesystem().IsMountPoint(v.global_path)) {
      auto md = CheckedCall(n, argv_.MountDevice(v.global_path, v.device, json), "kubelet");
      if (md.result.not_supported()) {
        // kubelet's default MountDevice: FormatAndMount of a device; nothing for "".
        if (!v.device.empty()) {
          try {
            n.filesystem().FormatAndMount(v.device, v.global_path,
                                          spec.fs_type.empty() ? "ext4" : spec.fs_type,
                                          spec.read_only);
          } catch (const std::exception& e) {
            Fail(
                "F8 (protocol §3.4: mountdevice Not supported: kubelet formats and mounts the "
                "device)",
                "kubelet's FormatAndMount of " + v.device + " at " + v.global_path +
                    " failed: " + e.what());
          }
        }
      } else if (!md.result.ok()) {
        // kubelet retries; the retry is skipped when the path is a mount point by now.
        if (md.failing.rule.empty() || !n.filesystem().IsMountPoint(v.global_path)) {
          FailStep(md, "F19 (protocol §7: mountdevice mounts the device)",
                   "mountdevice failed: " + Why(md.result));
        }
      }
      driver_mounted_device = md.result.ok();
    }
    const std::string global = v.global_path;
    tracker_.Push("unmountdevice " + global, [this, &n, global] { UnmountDevice(n, global); });
    if (driver_mounted_device) CheckMounted(n, "mountdevice", global, spec.read_only);
  }
  v.pod_dir = paths.PodVolumeDir(pod.pod_uid, spec.name);
  n.filesystem().MakeDirs(v.pod_dir, 0750);
  auto pod_copy = pod;
  auto m = CheckedCall(n, argv_.Mount(v.pod_dir, Json(spec, &pod_copy), v.device), "kubelet");
  if (m.result.not_supported()) {
    if (!profile_.attachable()) {
      Fail("F8 (protocol §7: a driver without attach must implement mount)",
           "mount answered Not supported and init says attach:false");
    }
    try {
      n.filesystem().Mount(v.global_path, v.pod_dir, "", MS_BIND, "");
      if (spec.read_only)
        n.filesystem().Mount("", v.pod_dir, "", MS_BIND | MS_REMOUNT | MS_RDONLY, "");
    } catch (const std::exception& e) {
      Fail("F8 (protocol §3.4: mount Not supported: kubelet bind-mounts the global path)",
           "kubelet's bind mount of " + v.global_path + " onto " + v.pod_dir +
               " failed: " + e.what());
    }
    v.driver_mounted = false;
  } else if (!m.result.ok()) {
    // As for mountdevice: kubelet's retry finds a mount point and goes on.
    if (m.failing.rule.empty() || !n.filesystem().IsMountPoint(v.pod_dir)) {
      FailStep(m, "protocol §7: mount of a valid volume succeeds",
               "mount failed: " + Why(m.result));
    }
  }
  auto* vp = &n;
  const std::string dir = v.pod_dir;
  const bool driver_mounted = v.driver_mounted;
  v.pod_undo = tracker_.Push("unmount " + dir, [this, vp, dir, driver_mounted] {
    PodVolume undo;
    undo.node = vp;
    undo.pod_dir = dir;
    undo.driver_mounted = driver_mounted;
    TearDownPod(undo);
  });
  if (m.result.ok()) CheckMounted(n, "mount", v.pod_dir, spec.read_only);
  return v;
}

PodVolume CaseContext::AttachDevice(sim::Node& n, const sim::VolumeSpec& spec) {
  PodVolume v;
  v.node = &n;
  v.spec = spec;
  const std::string json = Json(spec);
  const std::string component = profile_.kubelet_managed_attach ? "kubelet" : "controller";
  auto attached = CheckedCall(n, argv_.Attach(json, n.name()), component);
  // Not supported: kubelet's default Attach, device "" (protocol §3.4).
  if (!attached.result.ok() && !attached.result.not_supported()) {
    FailStep(attached, "F8 (protocol §7: an attachable driver attaches)",
             "attach must succeed, got " + Why(attached.result));
  }
  if (attached.result.ok() && attached.result.verdict.status)
    v.device = attached.result.verdict.status->device;
  v.attach_device = v.device;
  tracker_.Push("detach " + spec.name + " from " + n.name(), [this, &n, spec] { Detach(n, spec); });
  // The device recorded from attach, "" when there was none (§5.4).
  auto waited = CheckedCall(n, argv_.WaitForAttach(v.device, json), "kubelet");
  if (!waited.result.ok() && !waited.result.not_supported()) {
    FailStep(waited, "F8 (protocol §7: waitforattach returns the device)",
             "waitforattach must succeed, got " + Why(waited.result));
  }
  // Not supported: the device it was given; Success: the device it
  // answered, "" when it answered none.
  if (waited.result.ok())
    v.device = waited.result.verdict.status ? waited.result.verdict.status->device : "";
  v.global_path = Paths(n).DeviceMountPath(spec.name);
  // prepareForMount: 0750 (mountdevice is skipped where it is a mount point).
  n.filesystem().MakeDirs(v.global_path, 0750);
  return v;
}

void KubeletUnmount(sim::Node& n, const std::string& dir) {
  for (int attempt = 1;; ++attempt) {
    try {
      n.filesystem().Unmount(dir);
      return;
    } catch (const sim::FilesystemError& e) {
      if (e.code() != EBUSY || attempt == 10) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void KubeletRemoveDir(sim::Node& n, const std::string& dir) {
  if (!n.filesystem().PathExists(dir)) return;
  try {
    n.filesystem().RemoveDir(dir);
  } catch (const std::exception&) {
    if (n.filesystem().PathExists(dir)) throw;
  }
}

void CaseContext::AbandonTeardown(sim::Node& n, const std::string& dir) {
  std::string outcome = "cleaned up";
  try {
    while (n.filesystem().IsMountPoint(dir)) KubeletUnmount(n, dir);
    if (n.filesystem().PathExists(dir)) n.filesystem().RemoveDir(dir);
  } catch (const std::exception& e) {
    outcome = std::string("clean-up failed: ") + e.what();
  }
  transcript_.AddEvent("harness clean-up",
                       {{"path", dir},
                        {"why", "kubelet would retry this teardown forever; the case stops here"},
                        {"outcome", outcome}});
}

// kubelet's os.Remove after a successful teardown, only if the directory is
// still there: "Flexvolume driver may remove the directory. Ignore if it
// does." (cluster-facts §3).
static void RemoveIfPresent(CaseContext& c, sim::Node& n, const std::string& dir,
                            const std::string& rule, const std::string& after) {
  try {
    KubeletRemoveDir(n, dir);
  } catch (const std::exception& e) {
    c.Fail(rule, "rmdir after " + after + ": " + e.what());
  }
}

void CaseContext::TrackPodTeardown(sim::Node& n, const std::string& pod_dir) {
  tracker_.Push("unmount " + pod_dir, [this, &n, pod_dir] {
    PodVolume undo;
    undo.node = &n;
    undo.pod_dir = pod_dir;
    TearDownPod(undo);
  });
}

void CaseContext::TearDownPod(PodVolume& v) {
  sim::Node& n = *v.node;
  // TearDownAt skips the driver when the directory is gone.
  if (!n.filesystem().PathExists(v.pod_dir)) return;
  if (v.driver_mounted) {
    auto r = CheckedCall(n, argv_.Unmount(v.pod_dir), "kubelet");
    if (r.result.not_supported()) {
      if (n.filesystem().IsMountPoint(v.pod_dir)) KubeletUnmount(n, v.pod_dir);
    } else if (!r.result.ok()) {
      if (!r.failing.rule.empty()) {
        // kubelet retries; the retry is skipped only if the driver removed the dir.
        if (!n.filesystem().PathExists(v.pod_dir)) return;
        AbandonTeardown(n, v.pod_dir);
      }
      FailStep(r, "F10 (protocol §7: unmount succeeds)",
               "unmount " + v.pod_dir + " failed: " + Why(r.result));
    }
  } else if (n.filesystem().IsMountPoint(v.pod_dir)) {
    KubeletUnmount(n, v.pod_dir);
  }
  if (n.filesystem().IsMountPoint(v.pod_dir)) {
    Fail("F11 (protocol §7: unmount leaves nothing mounted)",
         "unmount reported Success but " + v.pod_dir + " is still a mount point");
  }
  RemoveIfPresent(*this, n, v.pod_dir, "F11 (kubelet removes the pod dir after unmount)",
                  "unmount");
}

void CaseContext::UnmountDevice(sim::Node& n, const std::string& global_path) {
  if (!n.filesystem().PathExists(global_path)) return;
  if (n.filesystem().IsMountPoint(global_path)) {
    auto r = CheckedCall(n, argv_.UnmountDevice(global_path), "kubelet");
    if (r.result.not_supported()) {
      n.filesystem().Unmount(global_path);
    } else if (!r.result.ok()) {
      // kubelet's retry skips unmountdevice once the path is no mount point.
      if (r.failing.rule.empty() || n.filesystem().IsMountPoint(global_path)) {
        if (!r.failing.rule.empty()) AbandonTeardown(n, global_path);
        FailStep(r, "F10 (protocol §7: unmountdevice succeeds)",
                 "unmountdevice failed: " + Why(r.result));
      }
    }
    if (n.filesystem().IsMountPoint(global_path)) {
      Fail("F11 (protocol §7: unmountdevice leaves nothing mounted)",
           "unmountdevice reported Success but " + global_path + " is still mounted");
    }
  }
  RemoveIfPresent(*this, n, global_path, "F11 (kubelet removes the global dir after unmountdevice)",
                  "unmountdevice");
}

void CaseContext::Detach(sim::Node& n, const sim::VolumeSpec& spec) {
  const std::string component = profile_.kubelet_managed_attach ? "kubelet" : "controller";
  auto r = CheckedCall(n, argv_.Detach(spec.name, n.name()), component);
  if (!r.result.ok() && !r.result.not_supported()) {
    FailStep(r, "F12 (protocol §7: detach succeeds)",
             "detach " + spec.name + " failed: " + Why(r.result));
  }
}

}  // namespace flexkit::conform
