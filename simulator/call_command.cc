#include "simulator/call_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "simulator/boost_process_runner.h"
#include "simulator/output_clip.h"
#include "simulator/volume_operations.h"

namespace flexkit::sim {
namespace {

// The longest text `call` prints whole (its head and tail past that).
constexpr std::size_t kPrintedTextLimit = 64 * 1024;

// Removes a temporary run dir on every exit path.
struct RunDir {
  std::string path;
  bool temporary = false;
  ~RunDir() {
    if (temporary) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
};

// flexsim call's driver calls: each on the call's node, labelled "cli",
// redacting the call's own secrets and those of the command line.
class CliCaller : public DriverCaller {
 public:
  CliCaller(DriverInvoker& invoker, std::string driver, const Redactor& secrets)
      : invoker_(invoker), driver_(std::move(driver)), secrets_(secrets) {}
  CallResult Call(const DriverCall& call) override {
    return invoker_.Call(call.node, "cli", driver_, call.args, secrets_);
  }

 private:
  DriverInvoker& invoker_;
  std::string driver_;
  const Redactor& secrets_;
};

// What kubelet did around the verb, in order: every driver call (the verb
// and those the plugin makes for it) and its own mounts, skips and
// directory removals.
class StepRecorder : public VolumeObserver {
 public:
  explicit StepRecorder(const Redactor& redactor) : redactor_(redactor) {}
  void DriverCalled(const DriverCall& call, const CallResult& r) override {
    if (!r.harness_problem.empty()) harness_problem = true;
    Add(call.args.at(0) + ": " + OutcomeName(r.verdict.outcome));
  }
  void KubeletActed(const Node&, const KubeletAction& a) override {
    std::string what = ActionName(a.kind);
    if (a.kind == KubeletAction::Kind::kSkipCall) {
      what = "skipped " + a.note;
    } else {
      if (!a.source.empty()) what += " " + a.source + " on";
      what += " " + a.path;
    }
    if (!a.error.empty()) what += " (failed: " + a.error + ")";
    Add(what);
  }
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  bool harness_problem = false;

 private:
  void Add(const std::string& step) { steps.push_back(redactor_.Apply(step)); }
  const Redactor& redactor_;
};

void RequireArgs(const CallCommand& c, std::size_t min, std::size_t max, const char* usage) {
  if (c.args.size() < min || c.args.size() > max) {
    throw std::invalid_argument("flexsim call " + c.verb + ": expected arguments " + usage);
  }
}

std::string Arg(const CallCommand& c, std::size_t i, const std::string& fallback = "") {
  return i < c.args.size() ? c.args[i] : fallback;
}

// The kubelet operation (or the controller's) the verb stands for.
Step RunVerb(VolumeOperations& ops, Node& node, CallCommand& c) {
  const std::string& v = c.verb;
  const auto ctl = Component::kController;
  if (v == "init") {
    RequireArgs(c, 0, 0, "(none)");
    return ops.Init(node, Component::kKubelet, c.volume.driver);
  }
  if (v == "getvolumename") {
    RequireArgs(c, 0, 0, "(none)");
    return ops.GetVolumeName(node, Component::kKubelet, c.volume);
  }
  if (v == "attach") {
    RequireArgs(c, 0, 0, "(none; the node is --node)");
    return ops.Attach(node, ctl, c.volume, c.node);
  }
  if (v == "waitforattach") {
    RequireArgs(c, 0, 1, "[DEVICE]");
    return ops.WaitForAttach(node, c.volume, Arg(c, 0));
  }
  if (v == "isattached") {
    RequireArgs(c, 0, 0, "(none)");
    return ops.IsAttached(node, ctl, c.volume, c.node);
  }
  if (v == "mountdevice") {
    RequireArgs(c, 0, 2, "[DEVICE [DIR]]");
    return ops.MountDevice(node, c.volume, Arg(c, 0), Arg(c, 1));
  }
  if (v == "mount") {
    RequireArgs(c, 0, 2, "[DIR [LEGACY-DEVICE]]");
    return ops.SetUp(node, c.volume, c.pod, /*fs_group_capability=*/true, Arg(c, 0));
  }
  if (v == "unmount") {
    RequireArgs(c, 0, 1, "[DIR]");
    const std::string dir = Arg(c, 0);
    if (dir.empty()) return ops.TearDown(node, c.volume, c.pod.pod_uid);
    return ops.TearDownAt(node, c.volume.driver, dir);
  }
  if (v == "unmountdevice") {
    RequireArgs(c, 0, 1, "[DIR]");
    return ops.UnmountDevice(node, c.volume, Arg(c, 0));
  }
  if (v == "detach") {
    RequireArgs(c, 0, 1, "[VOLUME-NAME]");
    if (!Arg(c, 0).empty()) c.volume.name = Arg(c, 0);
    return ops.Detach(node, ctl, c.volume, c.node);
  }
  if (v == "expandvolume") {
    RequireArgs(c, 2, 3, "NEW-BYTES OLD-BYTES [DIR]");
    return ops.ExpandVolume(node, ctl, c.volume, c.args[0], c.args[1], Arg(c, 2));
  }
  if (v == "expandfs") {
    RequireArgs(c, 2, 4, "NEW-BYTES OLD-BYTES [DEVICE [DIR]]");
    const std::string pod_dir =
        Arg(c, 3, ops.Paths(node, c.volume.driver).PodVolumeDir(c.pod.pod_uid, c.volume.name));
    return ops.NodeExpand(node, c.volume, Arg(c, 2), pod_dir, c.args[0], c.args[1]);
  }
  // Any other verb verbatim, to see how the driver answers it.
  Step step;
  step.verb = v;
  Args args = {v};
  args.insert(args.end(), c.args.begin(), c.args.end());
  CallResult r = ops.CallDriver(node, Component::kKubelet, c.volume.driver, args);
  step.call = r;
  if (!r.ok() && !r.not_supported()) {
    step.error = CallError(r);
    step.failed_verb = v;
  }
  return step;
}

}  // namespace

int RunCallCommand(CallCommand c) {
  const VersionProfile& profile = FindProfile(c.profile);
  if (::geteuid() != 0) {
    throw std::runtime_error("flexsim call: needs root to create the node's mount namespace");
  }
  c.driver = std::filesystem::absolute(c.driver).lexically_normal().string();
  // kubelet would never run it (the prober lists only what is there): a
  // usage error, not a driver's exit 127 to judge.
  if (::access(c.driver.c_str(), X_OK) != 0)
    throw std::runtime_error("flexsim call: driver " + c.driver + " not found or not executable");
  if (c.volume.driver.empty()) c.volume.driver = DriverNameFromPath(c.driver);
  if (c.pod.pod_uid.empty()) c.pod.pod_uid = "pod-uid-1";

  RunDir run_dir{c.run_dir, false};
  if (run_dir.path.empty()) {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/flexsim-call-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("flexsim call: create run dir " + pattern + ": mkdtemp failed");
    }
    run_dir = {pattern, true};
  }

  Transcript transcript;
  BoostProcessRunner runner;
  DriverInvoker invoker(runner, transcript, c.settings);
  Node node(c.node, run_dir.path, c.env);
  Redactor redactor;
  for (const auto& [key, value] : c.pod.secret) redactor.AddSecret(key, value);
  for (const auto& note : redactor.ShortSecretNotes()) {
    transcript.AddEvent("secret too short to redact safely", {{"note", note}});
  }
  CliCaller caller(invoker, c.driver, redactor);
  StepRecorder recorder(redactor);
  VolumeOperations ops(profile, caller, &recorder);
  const Step step = RunVerb(ops, node, c);
  if (!step.skipped.empty()) {
    transcript.AddEvent("skipped", {{"verb", c.verb}, {"reason", step.skipped}});
  }

  nlohmann::ordered_json out;
  nlohmann::ordered_json other_calls = nlohmann::ordered_json::array();
  for (const auto& record : transcript.Calls()) {
    auto j = CallRecordToJson(record);
    if (!c.strict) j["verdict"].erase("warnings");
    if (record.verb == c.verb && out.is_null()) {
      out = std::move(j);
    } else {
      other_calls.push_back(std::move(j));
    }
  }
  if (out.is_null()) out = {{"skipped", step.skipped}};
  out["other_calls"] = std::move(other_calls);
  out["kubelet_steps"] = std::move(recorder.steps);
  out["error"] = step.ok() ? nlohmann::ordered_json(nullptr)
                           : nlohmann::ordered_json(redactor.Apply(step.error));
  if (!redactor.ShortSecretNotes().empty()) out["redaction_notes"] = redactor.ShortSecretNotes();
  const int rc = recorder.harness_problem ? 3 : step.ok() ? 0 : 1;
  // A flood stays readable on a terminal; the transcript keeps it whole.
  ClipLongStrings(out, kPrintedTextLimit);
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (!c.transcript.empty()) transcript.WriteTo(c.transcript);
  return rc;
}

std::string DriverNameFromPath(const std::string& executable) {
  std::string dir = std::filesystem::path(executable).parent_path().filename().string();
  for (auto& ch : dir) {
    if (ch == '~') ch = '/';
  }
  return dir;
}

}  // namespace flexkit::sim
