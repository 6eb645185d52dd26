#include "conformance/replay.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "simulator/boost_process_runner.h"
#include "simulator/driver_invoker.h"
#include "simulator/judge.h"
#include "simulator/kubelet_paths.h"
#include "simulator/node.h"
#include "simulator/options_builder.h"
#include "simulator/transcript.h"
#include "simulator/volume_operations.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;

// Stands in for a recorded secret the profile does not name.
constexpr const char* kStandInSecret = "flexconform-replayed-secret";

std::string OutcomeOf(const sim::Verdict& v) { return sim::OutcomeName(v.outcome); }

bool IsControllerVerb(const std::string& verb) {
  return verb == "attach" || verb == "detach" || verb == "isattached";
}

// Where a verb carries a device: waitforattach <dev> <json>, mountdevice
// <path> <dev> <json>, expandfs <json> <dev> <podDir> <new> <old>.
int DeviceIndex(const std::string& verb) {
  if (verb == "waitforattach") return 1;
  if (verb == "mountdevice") return 2;
  if (verb == "expandfs") return 2;
  return -1;
}

// Runs every replayed call with the profile's driver on the replay node.
class ReplayCaller : public sim::DriverCaller {
 public:
  ReplayCaller(sim::DriverInvoker& invoker, std::string driver)
      : invoker_(invoker), driver_(std::move(driver)) {}
  sim::CallResult Call(const sim::DriverCall& call) override {
    return invoker_.Call(call.node, sim::ComponentName(call.component), driver_, call.args,
                         call.redactor);
  }

 private:
  sim::DriverInvoker& invoker_;
  std::string driver_;
};

class Replayer {
 public:
  Replayer(const DriverProfile& profile, const std::string& run_dir)
      : profile_(profile),
        node_("replay", run_dir),
        invoker_(runner_, transcript_, Settings(profile)),
        caller_(invoker_, profile.driver),
        ops_(sim::FindProfile(profile.kubernetes), caller_) {
    for (const auto& [key, raw] : profile.secrets) redactor_.AddSecret(raw);
    redactor_.AddSecret(kStandInSecret);
  }

  void Run(const std::vector<sim::RecordedCall>& calls, ReplayResult& result) {
    for (const auto& call : calls) One(call, result);
    if (secrets_replaced_ > 0)
      result.notes.push_back(std::to_string(secrets_replaced_) +
                             " recorded secret values (redacted in the log) were sent as the "
                             "profile's secrets or a stand-in");
    if (!devices_.empty())
      result.notes.push_back(std::to_string(devices_.size()) +
                             " recorded devices were mapped to the devices the driver returned");
    if (!recorded_root_.empty())
      result.notes.push_back("kubelet root " + recorded_root_ + " mapped to " +
                             node_.kubelet_root());
  }

 private:
  static sim::CallSettings Settings(const DriverProfile& p) {
    sim::CallSettings s;
    s.harness_deadline = p.default_timeout;
    for (const auto& [verb, t] : p.verb_timeouts)
      s.harness_deadline = std::max(s.harness_deadline, t);
    return s;
  }

  std::string MapPath(const std::string& arg) {
    if (arg.empty() || arg[0] != '/') return arg;
    const std::string root = sim::KubeletRootOf(arg);
    if (root.empty()) return arg;
    if (recorded_root_.empty()) recorded_root_ = root;
    if (root != recorded_root_) return arg;  // another kubelet's path: kept as recorded
    return node_.kubelet_root() + arg.substr(root.size());
  }

  std::string MapSecrets(std::string json) {
    auto doc = nlohmann::json::parse(json, nullptr, false);
    if (!doc.is_object()) return json;
    for (const auto& [key, value] : doc.items()) {
      if (key.rfind(sim::kSecretKeyPrefix, 0) != 0 || value != sim::kRecordedSecret) continue;
      const std::string name = key.substr(std::string(sim::kSecretKeyPrefix).size());
      const auto own = profile_.secrets.find(name);
      const std::string raw = own == profile_.secrets.end() ? kStandInSecret : own->second;
      const std::string from = "\"" + key + "\":\"" + sim::kRecordedSecret + "\"";
      const std::string to = "\"" + key + "\":\"" + sim::Base64(raw) + "\"";
      const auto at = json.find(from);
      if (at != std::string::npos) {
        json.replace(at, from.size(), to);
        ++secrets_replaced_;
      }
    }
    return json;
  }

  sim::Args MapArgs(const sim::RecordedCall& call) {
    sim::Args args = call.args;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (!args[i].empty() && args[i][0] == '{') {
        args[i] = MapSecrets(args[i]);
      } else {
        args[i] = MapPath(args[i]);
      }
    }
    const int dev = DeviceIndex(call.verb);
    if (dev > 0 && dev < static_cast<int>(args.size())) {
      const auto known = devices_.find(call.args[dev]);
      if (known != devices_.end()) args[dev] = known->second;
    }
    return args;
  }

  std::string OptionOf(const sim::Args& args, const std::string& key) {
    for (const auto& a : args) {
      if (a.empty() || a[0] != '{') continue;
      auto doc = nlohmann::json::parse(a, nullptr, false);
      if (doc.is_object() && doc.contains(key) && doc[key].is_string()) return doc[key];
    }
    return "";
  }

  // What kubelet does before the call (prepareForMount).
  void Before(const std::string& verb, const sim::Args& args) {
    if ((verb == "mount" || verb == "mountdevice") && args.size() > 1 &&
        !node_.filesystem().PathExists(args[1]))
      node_.filesystem().MakeDirs(args[1], 0750);
  }

  // What kubelet does after the call, on the replayed outcome: the
  // Not-supported fallbacks and removing a directory after a teardown (the
  // getvolumename kubelet asks on the way is a recorded call of its own).
  void After(const std::string& verb, const sim::Args& args, const sim::CallResult& r) {
    auto& m = node_.filesystem();
    const std::string path = args.size() > 1 ? args[1] : "";
    sim::VolumeSpec spec;
    spec.driver = profile_.driver_name;
    spec.read_only = OptionOf(args, "kubernetes.io/readwrite") == "ro";
    spec.fs_type = OptionOf(args, "kubernetes.io/fsType");
    sim::Step step;
    if (verb == "mount" && r.not_supported()) {
      const std::string vol = fs::path(path).filename().string();
      const std::string global = ops_.Paths(node_, spec.driver).DeviceMountPath(vol);
      if (m.PathExists(global) && m.IsMountPoint(global))
        ops_.DefaultSetUp(node_, spec, global, path, step);
    } else if (verb == "mountdevice" && r.not_supported() && args.size() > 2) {
      ops_.DefaultMountDevice(node_, spec, args[2], path, step);
    } else if ((verb == "unmount" || verb == "unmountdevice") && (r.ok() || r.not_supported())) {
      if (r.not_supported() && m.PathExists(path)) ops_.DefaultUnmount(node_, path, step);
      if (step.ok()) ops_.RemoveDir(node_, path, step);
    }
    if (!step.ok()) kubelet_errors_.push_back(verb + ": kubelet's own step failed: " + step.error);
  }

  void One(const sim::RecordedCall& call, ReplayResult& result) {
    auto differ = [&](const std::string& what) {
      result.differences.push_back({call.line, call.verb, what});
    };
    sim::ExitStatus recorded_exit;
    if (call.signal != 0) {
      recorded_exit.signal = call.signal;
    } else {
      recorded_exit.exit_code = call.exit_code;
    }
    const sim::Verdict recorded = sim::Judge(call.verb, recorded_exit, call.output);
    const sim::Args args = MapArgs(call);
    Before(call.verb, args);
    const auto r = ops_.CallDriver(
        node_, IsControllerVerb(call.verb) ? sim::Component::kController : sim::Component::kKubelet,
        profile_.driver_name, args, redactor_);
    After(call.verb, args, r);
    for (auto& e : kubelet_errors_) differ(e);
    kubelet_errors_.clear();
    if (!r.harness_problem.empty()) {
      differ("replayed: " + r.harness_problem + "; recorded: " + OutcomeOf(recorded));
      return;
    }
    if (r.verdict.outcome != recorded.outcome) {
      differ("recorded " + OutcomeOf(recorded) +
             (recorded.error.empty() ? "" : " (" + redactor_.Apply(recorded.error) + ")") +
             ", replayed " + OutcomeOf(r.verdict) +
             (r.verdict.error.empty() ? "" : " (" + redactor_.Apply(r.verdict.error) + ")"));
      return;
    }
    if (r.verdict.outcome != sim::Outcome::kSuccess || !recorded.status || !r.verdict.status)
      return;
    if (call.verb == "isattached" && recorded.status->attached != r.verdict.status->attached)
      differ(std::string("recorded attached:") + (recorded.status->attached ? "true" : "false") +
             ", replayed attached:" + (r.verdict.status->attached ? "true" : "false"));
    if (call.verb == "attach" || call.verb == "waitforattach") {
      const std::string& was = recorded.status->device;
      const std::string& now = r.verdict.status->device;
      if (was.empty() != now.empty())
        differ("recorded device '" + was + "', replayed device '" + now + "'");
      if (!was.empty() && !now.empty()) devices_[was] = now;
    }
  }

  const DriverProfile& profile_;
  sim::Node node_;
  sim::BoostProcessRunner runner_;
  sim::Transcript transcript_;
  sim::DriverInvoker invoker_;
  ReplayCaller caller_;
  sim::VolumeOperations ops_;
  sim::Redactor redactor_;
  std::string recorded_root_;
  std::map<std::string, std::string> devices_;  // recorded -> replayed
  std::vector<std::string> kubelet_errors_;
  int secrets_replaced_ = 0;
};

}  // namespace

ReplayResult Replay(const DriverProfile& profile, const std::vector<sim::RecordedCall>& calls,
                    const std::string& run_root) {
  const std::string run_dir = run_root + "/flexconform-replay-" + std::to_string(::getpid());
  fs::create_directories(run_dir);
  ReplayResult result;
  result.calls = calls.size();
  {
    Replayer replayer(profile, run_dir);
    replayer.Run(calls, result);
  }  // the node's namespace, and every mount in it, ends here
  std::error_code ec;
  fs::remove_all(run_dir, ec);
  return result;
}

}  // namespace flexkit::conform
