#include "conformance/case_context.h"

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include "conformance/plugin_dir_watch.h"
#include "conformance/rules.h"
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
// A call in the control plane gets its hostname (a driver that keys attach
// on `hostname` rather than the node it is given names the control plane
// there, as in a cluster) and, where a case asks for it, the control
// plane's PATH.
class CapturingRunner : public sim::ProcessRunner {
 public:
  CapturingRunner(sim::ProcessRunner& inner, bool in_control_plane, std::string path)
      : inner_(inner), in_control_plane_(in_control_plane), path_(std::move(path)) {}
  sim::ProcessResult Run(const sim::ProcessSpec& spec) override {
    if (!in_control_plane_) {
      last_ = inner_.Run(spec);
    } else {
      sim::ProcessSpec in_control_plane = spec;
      if (!path_.empty()) in_control_plane.env_overrides["PATH"] = path_;
      in_control_plane.hostname = sim::kControlPlaneName;
      last_ = inner_.Run(in_control_plane);
    }
    return last_;
  }
  const sim::ProcessResult& last() const { return last_; }

 private:
  sim::ProcessRunner& inner_;
  bool in_control_plane_;
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
      case_dir_(std::move(case_dir)),
      unique_prefix_(std::move(unique_prefix)),
      repeat_(repeat),
      fixture_(fixture),
      runner_(runner),
      declared_nodes_(nodes),
      ops_(*version_, kubelet_caller_),
      beyond_kubelet_ops_(*version_, beyond_kubelet_caller_),
      control_plane_ops_(*version_, control_plane_caller_) {
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
  for (auto* ops : {&ops_, &beyond_kubelet_ops_, &control_plane_ops_}) ops->UseProfile(*version_);
}

sim::MountExtras CaseContext::Pod(const std::string& stem) {
  sim::MountExtras pod;
  pod.pod_name = Unique(stem);
  pod.pod_namespace = "default";
  pod.pod_uid = Unique("uid");
  pod.secret = profile_.secrets;
  return pod;
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
  for (auto* ops : {&ops_, &beyond_kubelet_ops_, &control_plane_ops_}) ops->UseKubeletRoot(n, root);
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
      Fail("F24 data-not-code: option values, secrets and paths are data, never code",
           verb + ": the driver executed part of " + input + " (canary " + path + " appeared)");
    }
  }
}

namespace {
constexpr const char* kReconstructedDeviceWarning =
    "waitforattach \"\" after a kubelet restart: with controller-managed attach node status "
    "gives the device on the next try";
constexpr const char* kSuccessIsTrueRule =
    "success-is-true: a Success is true (the mount exists and is usable)";
}  // namespace

Finding CaseContext::CheckSuccessIsTrue(sim::Node& n, const sim::Args& args) {
  const std::string verb = Verb(args);
  if ((verb != "mount" && verb != "mountdevice") || args.size() < 2) return {};
  const std::string& target = args[1];
  std::string why;
  if (profile_.pod_volume_is_directory) {
    if (n.filesystem().PathExists(target)) return {};
    RecordCheck(n, "directory", target, "missing");
    why = verb + " answered Success but " + target + " is gone (podVolume: directory)";
  } else {
    if (n.filesystem().IsMountPoint(target)) return {};
    RecordCheck(n, "mount point", target, "not a mount point");
    why = verb + " answered Success but " + target + " is not a mount point";
  }
  // Wherever the call was made: the driver says it did what it did not.
  Record(kSuccessIsTrueRule, why);
  return {Grade::kFail, kSuccessIsTrueRule, why};
}

void CaseContext::CheckMounted(sim::Node& n, const std::string& verb, const std::string& target,
                               bool read_only) {
  const bool directory = profile_.pod_volume_is_directory;
  if (directory && !n.filesystem().PathExists(target)) {
    Fail(kSuccessIsTrueRule,
         verb + " answered Success but " + target + " is gone (podVolume: directory)");
  }
  if (!directory && !n.filesystem().IsMountPoint(target)) {
    Fail(kSuccessIsTrueRule, verb + " answered Success but " + target + " is not a mount point");
  }
  std::error_code ec;
  const std::string real = HostPath(n, target);
  if (read_only) {
    std::filesystem::directory_iterator it(real, ec);
    if (ec) {
      RecordCheck(n, "read", target, ec.message());
      Fail(kSuccessIsTrueRule,
           verb + " answered Success but " + target + " cannot be read: " + ec.message());
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
      Fail(kSuccessIsTrueRule,
           verb + " answered Success but " + target + " is not usable: " + e.what());
    }
    Warn(verb + ": " + target + " is mounted but not writable: " + e.what());
    return;
  }
  std::filesystem::remove(HostPath(n, probe), ec);
  if (back != content) {
    RecordCheck(n, "read back", probe, "read back '" + back + "'");
    Fail(kSuccessIsTrueRule,
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

std::vector<std::string> CaseContext::OwnSecrets() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> own;
  for (const auto& s : secrets_) {
    if (s.find(unique_prefix_) != std::string::npos) own.push_back(s);
  }
  return own;
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

void CaseContext::WarnOfCall(const std::string& verb, const std::string& warning) {
  std::lock_guard lock(mutex_);
  auto [it, first] = call_warnings_.try_emplace(warning, CallWarning{warnings_.size(), {}});
  auto& verbs = it->second.verbs;
  if (std::find(verbs.begin(), verbs.end(), verb) == verbs.end()) verbs.push_back(verb);
  std::string line;
  for (const auto& v : verbs) line += (line.empty() ? "" : ", ") + v;
  line += ": " + warning;
  if (first) {
    warnings_.push_back(line);
  } else {
    warnings_[it->second.at] = line;
  }
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

void CaseContext::Withdraw(std::size_t mark, const std::string& rule, const std::string& why) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = mark; i < findings_.size(); ++i) {
    if (findings_[i].rule == rule && findings_[i].why == why) {
      findings_.erase(findings_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
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
                           "from a distroless image (RULES.md F2 controller-path)"}});
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

sim::CallResult CaseContext::CheckedCall(sim::Node& n, const sim::Args& args,
                                         const std::string& component,
                                         const std::string& executable, CallMode mode) {
  const std::string verb = Verb(args);
  CapturingRunner capturing(runner_, mode.control_plane,
                            mode.control_plane_path ? ControlPlanePath() : "");
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
  if (failing.rule.empty() && r.ok()) failing = CheckSuccessIsTrue(n, args);
  if (!failing.rule.empty() && r.record) {
    std::lock_guard lock(mutex_);
    failing_by_record_[*r.record] = failing;
  }
  if (plugin_dir) CheckPluginDir(verb, plugin_dir->Changes());
  return r;
}

bool CaseContext::IsAttachedWitnesses(sim::Node& caller, const std::string& claim,
                                      const std::string& rule) {
  if (!isattached_said_false_ && !isattached_probed_.exchange(true)) {
    const sim::VolumeSpec never = Volume(Unique("never-attached"));
    beyond_kubelet_ops_.CallIsAttached(caller, sim::Component::kController, never, caller.name());
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
      "probe-storm: any change in the driver's folder makes kubelet re-run init "
      "and drop its Not-supported cache (kubernetes#58352)",
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
    } else if (!mode.warn_because.empty()) {
      Warn(why + " [" + rule + "; a WARN: " + mode.warn_because + "]");
    } else {
      Record(rule, why);
    }
    if (fails_the_call && failing.rule.empty()) failing = {Grade::kFail, rule, why};
  };
  if (!harness_problem.empty()) {
    found(HarnessProblemRule(harness_problem), verb + ": " + harness_problem, true);
  }
  if (!spawn_error.empty()) {
    found("F27 executable: the driver must be executable", verb + ": exec failed: " + spawn_error,
          true);
  }
  // kubelet uses a reply that leaks a secret: the case goes on.
  if (HasSecret(raw_output)) RecordSecretLeak(verb);
  if (harness_problem.empty() && verdict.outcome == sim::Outcome::kDecodeError) {
    const std::string why =
        verb +
        (mode.control_plane_path
             ? ", run as the controller runs it (PATH=" + ControlPlanePath() + ")"
             : std::string()) +
        ": kubelet cannot decode the reply: " + verdict.error;
    // In the control plane a tool the shell cannot find breaks the reply
    // (cluster-facts §2); any other stray output breaks it as on a node.
    if (mode.control_plane_path && ShellFoundNoCommand(raw_output)) {
      found("F2 controller-path: kube-controller-manager has no shell tools, a minimal PATH", why,
            true);
    } else {
      found("F1/F2/F3 one-json-reply: combined output must be exactly one JSON document", why,
            true);
    }
  }
  if (verdict.outcome == sim::Outcome::kFailure && verdict.status &&
      verdict.status->status == "Success") {
    found("F4 exit-code: Success with a non-zero exit is an error to kubelet",
          verb + ": \"Success\" with " + verdict.error, true);
  }
  for (const auto& w : verdict.warnings) WarnOfCall(verb, w);

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
    found("F7 stable-not-supported: kubelet caches Not supported for the plugin's lifetime",
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
  Record("F21 no-secret-leak: secrets never appear in replies or logs",
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
    // attach <json> <node> that gave a device: (node, json) -> true.
    if (r.verb == "attach" && r.argv.size() >= 4 && r.verdict.status &&
        !r.verdict.status->device.empty())
      driven_attached_with_device_.insert({r.argv[3], r.argv[2]});
    CallMode mode;
    // waitforattach "" <json> after an attach gave a device is a kubelet
    // restart's reconstruction; with the controller, node status gives the
    // device on the next try (reconciler.go updateReconstructedFromNodeStatus).
    if (r.verb == "waitforattach" && r.argv.size() >= 4 && r.argv[2].empty() &&
        driven_controller_attach_.value_or(!profile_.kubelet_managed_attach) &&
        driven_attached_with_device_.count({r.node, r.argv[3]}))
      mode.warn_because = kReconstructedDeviceWarning;
    // The raw output was searched for secrets above, or by Call.
    CheckReply(r.verb, r.harness_problem, r.process.spawn_error, "", r.verdict, mode);
  }
}

sim::CallSettings CaseContext::DrivenCallSettings() const {
  sim::Millis longest = profile_.default_timeout;
  for (const auto& [verb, timeout] : profile_.verb_timeouts) longest = std::max(longest, timeout);
  return SettingsWithDeadline(longest);
}

sim::Component CaseContext::Attacher() const {
  return profile_.kubelet_managed_attach ? sim::Component::kKubelet : sim::Component::kController;
}

sim::CallResult CaseContext::ModeCaller::Call(const sim::DriverCall& call) {
  CallMode mode;
  const bool controller =
      call.component == sim::Component::kController && ControllerVerb(Verb(call.args));
  mode.control_plane = controller && (in_control_plane_ || !c_.profile_.kubelet_managed_attach);
  mode.control_plane_path = controller && in_control_plane_;
  if (mode.control_plane_path) {
    mode.warn_because = c_.profile_.kubelet_managed_attach
                            ? "the profile says kubelet-managed attach"
                            : "the case judges the control plane's environment as a whole";
  }
  mode.beyond_kubelet = beyond_kubelet_;
  return c_.CheckedCall(call.node, call.args, sim::ComponentName(call.component), "", mode);
}

sim::CallResult CaseContext::InitCopy(sim::Node& n, const std::string& executable) {
  return CheckedCall(n, sim::ArgvBuilder(*version_).Init(), "kubelet", executable, CallMode{});
}

const sim::CallResult& CaseContext::Require(const sim::CallResult& r, const std::string& verb,
                                            const std::string& rule) {
  if (r.ok()) return r;
  const Finding failing = FailingFinding(r);
  if (!failing.rule.empty()) Fail(failing.rule, failing.why);
  Fail(rule, verb + " must succeed, got " + Why(r));
}

Finding CaseContext::FailingFinding(const sim::CallResult& r) const {
  std::lock_guard lock(mutex_);
  if (!r.record) return {};
  auto it = failing_by_record_.find(*r.record);
  return it == failing_by_record_.end() ? Finding{} : it->second;
}

void CaseContext::ClearTranscript() {
  transcript_.Clear();
  std::lock_guard lock(mutex_);
  failing_by_record_.clear();
}

void CaseContext::FailStep(const sim::Step& step, const std::string& rule, const std::string& why) {
  if (step.failed_call) {
    const Finding failing = FailingFinding(*step.failed_call);
    if (!failing.rule.empty()) Fail(failing.rule, failing.why);
  }
  Fail(rule, why);
}

namespace {

// What a failed step's call answered, for a why.
std::string StepWhy(const sim::Step& step) {
  if (step.failed_call) return Why(*step.failed_call);
  return step.error;
}

}  // namespace

PodVolume CaseContext::SetUp(sim::Node& n, const sim::VolumeSpec& spec,
                             const sim::MountExtras& pod) {
  PodVolume v;
  v.node = &n;
  v.spec = spec;
  v.pod = pod;
  auto paths = Paths(n);
  const bool attachable = profile_.attachable();
  if (attachable) {
    v.global_path = paths.DeviceMountPath(spec.name);
    v.attach_device = Attach(n, spec);
  }
  v.pod_dir = paths.PodVolumeDir(pod.pod_uid, spec.name);
  const bool fs_group = !profile_.capabilities || profile_.capabilities->fs_group;
  const sim::MountResult m =
      ops_.MountVolume(n, spec, pod, attachable, v.attach_device, false, fs_group);
  v.device = m.device;
  if (attachable) {
    if (!m.wait_for_attach.ok()) {
      FailStep(m.wait_for_attach, "F8 waitforattach-device: waitforattach returns the device",
               "waitforattach must succeed, got " + StepWhy(m.wait_for_attach));
    }
    const sim::Step& md = m.mount_device;
    if (!md.ok()) JudgeFailedMountDevice(n, md, v.global_path, v.device);
    const std::string global = v.global_path;
    const sim::VolumeSpec unmount_spec = spec;
    tracker_.Push("unmountdevice " + global,
                  [this, &n, unmount_spec, global] { UnmountDevice(n, unmount_spec, global); });
    if (md.answered_success()) CheckMounted(n, "mountdevice", global, spec.read_only);
  }
  const sim::Step& mount = m.set_up;
  v.driver_mounted = !mount.answered_not_supported();
  if (!mount.ok()) JudgeFailedSetUp(n, mount, v);
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
  for (const auto& action : mount.actions) {
    if (action.kind == sim::KubeletAction::Kind::kSetOwnership && !action.error.empty())
      v.ownership_error = action.error;
  }
  if (mount.answered_success()) CheckMounted(n, "mount", v.pod_dir, spec.read_only);
  return v;
}

// A MountDevice that failed, judged by what failed it; kubelet retries, and
// where a retry would be skipped (the path is a mount point by now) the
// case goes on.
void CaseContext::JudgeFailedMountDevice(sim::Node& n, const sim::Step& md,
                                         const std::string& global, const std::string& device) {
  if (md.failed_verb == "getvolumename") {
    FailStep(md, "F29 getvolumename-never-fails: getvolumename never fails",
             "kubelet's getDeviceMountPath before mountdevice: " + md.error);
  }
  if (md.fallback) {
    Fail(
        "F8 mountdevice-fallback: mountdevice Not supported: kubelet formats and mounts the device",
        "kubelet's FormatAndMount of " + device + " at " + global + " failed: " + md.error);
  }
  if (!md.failed_by_call()) {
    Fail("F19 mountdevice-mounts: mountdevice mounts the device",
         "kubelet's MountDevice at " + global + " failed: " + md.error);
  }
  if (FailingFinding(*md.failed_call).rule.empty() || !n.filesystem().IsMountPoint(global)) {
    FailStep(md, "F19 mountdevice-mounts: mountdevice mounts the device",
             "mountdevice failed: " + Why(*md.failed_call));
  }
}

// A SetUp that failed, judged the same way.
void CaseContext::JudgeFailedSetUp(sim::Node& n, const sim::Step& mount, const PodVolume& v) {
  if (mount.fallback && !profile_.attachable()) {
    Fail("F8 mount-only-implements-mount: a driver without attach must implement mount",
         "mount answered Not supported and init says attach:false");
  }
  if (mount.failed_verb == "getvolumename") {
    FailStep(mount, "F29 getvolumename-never-fails: getvolumename never fails",
             "kubelet's getDeviceMountPath for its bind mount: " + mount.error);
  }
  if (mount.fallback) {
    Fail("F8 mount-fallback: mount Not supported: kubelet bind-mounts the global path",
         "kubelet's bind mount of " + v.global_path + " onto " + v.pod_dir +
             " failed: " + mount.error);
  }
  if (!mount.failed_by_call()) {
    Fail("mount-succeeds: mount of a valid volume succeeds",
         "kubelet's SetUp of " + v.pod_dir + " failed: " + mount.error);
  }
  // As for mountdevice: kubelet's retry finds a mount point and goes on.
  if (FailingFinding(*mount.failed_call).rule.empty() || !n.filesystem().IsMountPoint(v.pod_dir)) {
    FailStep(mount, "mount-succeeds: mount of a valid volume succeeds",
             "mount failed: " + Why(*mount.failed_call));
  }
}

// A failed attach leaves the attachment uncertain (operation_generator.go's
// GenerateAttachVolumeFunc marks it so; flexsim's controller too): the
// attacher tries again after a back-off and detaches it once no pod wants
// it. So the detach is tracked before the attach is judged, and a reply
// that broke a rule of its own (stray output, say: already a finding) is
// tried once more, so the case goes on to its own checks as kubelet would.
// A hung attach is not: a second hang would only double the wait.
std::string CaseContext::Attach(sim::Node& n, const sim::VolumeSpec& spec) {
  tracker_.Push("detach " + spec.name + " from " + n.name(), [this, &n, spec] { Detach(n, spec); });
  sim::Step a = ops_.Attach(n, Attacher(), spec, n.name());
  if (!a.ok() && a.failed_call && a.failed_call->harness_problem.empty() &&
      !FailingFinding(*a.failed_call).rule.empty())
    a = ops_.Attach(n, Attacher(), spec, n.name());
  // Not supported: kubelet's default Attach, device "" (protocol §3.4).
  if (!a.ok()) {
    FailStep(a, "F8 attach-succeeds: an attachable driver attaches",
             "attach must succeed, got " + StepWhy(a));
  }
  return a.device;
}

PodVolume CaseContext::AttachDevice(sim::Node& n, const sim::VolumeSpec& spec) {
  PodVolume v;
  v.node = &n;
  v.spec = spec;
  v.attach_device = Attach(n, spec);
  // The device recorded from attach, "" when there was none (§5.4).
  const sim::Step w = ops_.WaitForAttach(n, spec, v.attach_device);
  if (!w.ok()) {
    FailStep(w, "F8 waitforattach-device: waitforattach returns the device",
             "waitforattach must succeed, got " + StepWhy(w));
  }
  v.device = w.device;
  v.global_path = Paths(n).DeviceMountPath(spec.name);
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
  const sim::Step t = ops_.TearDownAt(n, profile_.driver_name, v.pod_dir);
  if (!t.skipped.empty()) return;  // TearDownAt skips the driver when the dir is gone
  if (t.failed_by_call()) {
    if (!FailingFinding(*t.failed_call).rule.empty()) {
      // kubelet retries; the retry is skipped only if the driver removed the dir.
      if (!n.filesystem().PathExists(v.pod_dir)) return;
      AbandonTeardown(n, v.pod_dir);
    }
    FailStep(t, "F10 unmount-succeeds: unmount succeeds",
             "unmount " + v.pod_dir + " failed: " + Why(*t.failed_call));
  }
  if (t.fallback && !t.ok() && n.filesystem().IsMountPoint(v.pod_dir)) {
    throw std::runtime_error("kubelet's unmount of " + v.pod_dir + ": " + t.error);
  }
  if (n.filesystem().IsMountPoint(v.pod_dir)) {
    Fail("F11 unmount-unmounts: unmount leaves nothing mounted",
         "unmount reported Success but " + v.pod_dir + " is still a mount point");
  }
  if (!t.ok()) {
    Fail("F11 dir-removable: kubelet removes the pod dir after unmount",
         "rmdir after unmount: " + t.error);
  }
}

void CaseContext::UnmountDevice(sim::Node& n, const sim::VolumeSpec& spec,
                                const std::string& global_path) {
  const sim::Step u = ops_.UnmountDevice(n, spec, global_path);
  if (u.failed_verb == "getvolumename") {
    FailStep(u, "F29 getvolumename-never-fails: getvolumename never fails",
             "kubelet's getDeviceMountPath before unmountdevice: " + u.error);
  }
  if (u.failed_by_call()) {
    const bool per_call = !FailingFinding(*u.failed_call).rule.empty();
    // kubelet's retry skips unmountdevice once the path is no mount point.
    if (!per_call || n.filesystem().IsMountPoint(global_path)) {
      if (per_call) AbandonTeardown(n, global_path);
      FailStep(u, "F10 unmountdevice-succeeds: unmountdevice succeeds",
               "unmountdevice failed: " + Why(*u.failed_call));
    }
    RemoveIfPresent(*this, n, global_path,
                    "F11 dir-removable: kubelet removes the global dir after unmountdevice",
                    "unmountdevice");
    return;
  }
  if (u.fallback && !u.ok() && n.filesystem().IsMountPoint(global_path)) {
    throw std::runtime_error("kubelet's unmount of " + global_path + ": " + u.error);
  }
  if (n.filesystem().IsMountPoint(global_path)) {
    Fail("F11 unmountdevice-unmounts: unmountdevice leaves nothing mounted",
         "unmountdevice reported Success but " + global_path + " is still mounted");
  }
  if (!u.ok()) {
    Fail("F11 dir-removable: kubelet removes the global dir after unmountdevice",
         "rmdir after unmountdevice: " + u.error);
  }
}

void CaseContext::Detach(sim::Node& n, const sim::VolumeSpec& spec) {
  const sim::Step d = ops_.Detach(n, Attacher(), spec, n.name());
  if (d.failed_verb == "getvolumename") {
    FailStep(d, "F29 getvolumename-never-fails: getvolumename never fails",
             "getvolumename before detach " + spec.name + ": " + d.error);
  }
  if (!d.ok()) {
    FailStep(d, "F12 detach-succeeds: detach succeeds",
             "detach " + spec.name + " failed: " + StepWhy(d));
  }
}

}  // namespace flexkit::conform
