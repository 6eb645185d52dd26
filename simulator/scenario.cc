#include "simulator/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "platform/read_file.h"
#include "simulator/boost_process_runner.h"

namespace flexkit::sim {
namespace fs = std::filesystem;
namespace {

Clock::Duration ParseDuration(const std::string& text) {
  std::size_t end = 0;
  double value = std::stod(text, &end);
  std::string unit = text.substr(end);
  double ms = unit == "ms"                  ? value
              : unit == "s" || unit.empty() ? value * 1000
              : unit == "m"                 ? value * 60000
              : unit == "h"                 ? value * 3600000
                                            : -1;
  if (ms < 0) throw std::runtime_error("duration \"" + text + "\": unit must be ms, s, m or h");
  return Clock::Duration(static_cast<long>(ms));
}

std::pair<std::string, std::string> PodRef(const std::string& ref) {
  auto slash = ref.find('/');
  if (slash == std::string::npos) return {"default", ref};
  return {ref.substr(0, slash), ref.substr(slash + 1)};
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class Runner {
 public:
  Runner(Cluster& cluster, fs::path base) : c_(cluster), base_(std::move(base)) {}

  // Runs one step; throws with what was expected and what was found.
  void Step(const YAML::Node& step) {
    if (!step.IsMap() || step.size() != 1) throw std::runtime_error("a step is a map with one key");
    const std::string op = step.begin()->first.as<std::string>();
    const YAML::Node arg = step.begin()->second;
    if (op == "apply") {
      c_.Apply(ParseManifest(arg.as<std::string>()));
      Settle();
    } else if (op == "applyFile") {
      c_.Apply(ParseManifest(platform::ReadWholeFile(base_ / arg.as<std::string>())));
      Settle();
    } else if (op == "deletePod") {
      auto [ns, name] = PodRef(arg.as<std::string>());
      c_.DeletePod(ns, name);
      Settle();
    } else if (op == "settle") {
      Settle();
    } else if (op == "advance") {
      last_errors_ = c_.Advance(ParseDuration(arg.as<std::string>()));
    } else if (op == "crashNode") {
      c_.CrashNode(arg.as<std::string>());
      Settle();
    } else if (op == "restartNode") {
      c_.RestartNode(arg.as<std::string>());
      Settle();
    } else if (op == "restartKubelet") {
      c_.RestartKubelet(arg.as<std::string>());
      Settle();
    } else if (op == "stopKubelet") {
      c_.StopKubelet(arg.as<std::string>());
    } else if (op == "startKubelet") {
      c_.StartKubelet(arg.as<std::string>());
      Settle();
    } else if (op == "partitionNode" || op == "healNode") {
      c_.node(arg.as<std::string>()).SetPartitioned(op == "partitionNode");
      Settle();
    } else if (op == "writeFile") {
      auto [node, path] = PodFile(arg);
      c_.node(node).filesystem().WriteFile(path, arg["content"].as<std::string>());
    } else if (op == "expectFile") {
      auto [node, path] = PodFile(arg);
      std::string got = c_.node(node).filesystem().ReadFile(path);
      std::string want = arg["content"].as<std::string>();
      if (got != want)
        throw std::runtime_error(path + " holds \"" + got + "\", expected \"" + want + "\"");
    } else if (op == "expectGroup") {
      auto [node, path] = PodFile(arg);
      long gid = c_.node(node).filesystem().GroupOf(path);
      if (gid != arg["gid"].as<long>()) {
        throw std::runtime_error(path + " has group " + std::to_string(gid) + ", expected " +
                                 arg["gid"].as<std::string>());
      }
    } else if (op == "expectWriteFails") {
      auto [node, path] = PodFile(arg);
      bool wrote = true;
      try {
        c_.node(node).filesystem().WriteFile(path, "x");
      } catch (const std::exception&) {
        wrote = false;
      }
      if (wrote)
        throw std::runtime_error("writing " + path + " succeeded; the volume should be read-only");
    } else if (op == "expectVolume") {
      ExpectVolume(arg);
    } else if (op == "expectEvent") {
      ExpectEvent(arg);
    } else if (op == "expectCalls") {
      ExpectCalls(arg);
    } else if (op == "expectSettled") {
      if (!last_errors_.empty()) {
        throw std::runtime_error("the last settle had errors: " + Join(last_errors_));
      }
    } else {
      throw std::runtime_error("unknown step \"" + op + "\"");
    }
  }

 private:
  void Settle() { last_errors_ = c_.Settle(); }

  // (node, path of the file inside the pod's volume) for {pod, volume, file}.
  std::pair<std::string, std::string> PodFile(const YAML::Node& arg) {
    auto [ns, name] = PodRef(arg["pod"].as<std::string>());
    const Pod& pod = c_.pod(ns, name);
    const std::string volume = arg["volume"].as<std::string>();
    for (const auto& v : pod.volumes) {
      if (v.name != volume) continue;
      std::string dir = c_.kubelet(pod.node).PodVolumeDir(pod, v);
      if (!c_.node(pod.node).filesystem().IsMountPoint(dir)) {
        throw std::runtime_error("volume " + volume + " of pod " + ns + "/" + name +
                                 " is not mounted at " + dir);
      }
      return {pod.node, dir + "/" + arg["file"].as<std::string>()};
    }
    throw std::runtime_error("pod " + ns + "/" + name + " has no volume " + volume);
  }

  void ExpectVolume(const YAML::Node& arg) {
    const std::string volume = arg["volume"].as<std::string>();
    const std::string suffix = "/" + volume;
    auto check = [&](const char* key, std::vector<std::string> found) {
      if (!arg[key]) return;
      auto want = Sorted(arg[key].as<std::vector<std::string>>());
      found = Sorted(found);
      if (want != found) {
        throw std::runtime_error("volume " + volume + " " + key + " " + Join(found) +
                                 ", expected " + Join(want));
      }
    };
    std::vector<std::string> attached, in_use, mounted;
    for (const auto& [node, status] : c_.state().node_status) {
      for (const auto& [unique, device] : status.volumes_attached) {
        if (EndsWith(unique, suffix)) attached.push_back(node);
      }
      for (const auto& unique : status.volumes_in_use) {
        if (EndsWith(unique, suffix)) in_use.push_back(node);
      }
    }
    for (const auto& [key, pod] : c_.state().pods) {
      if (pod.node.empty() || !c_.node(pod.node).running()) continue;
      for (const auto& v : pod.volumes) {
        if (c_.state().Resolve(pod, v).spec.name != volume) continue;
        bool believed = c_.kubelet(pod.node).PodsWithVolume(volume).count(pod.uid) != 0;
        bool real =
            c_.node(pod.node).filesystem().IsMountPoint(c_.kubelet(pod.node).PodVolumeDir(pod, v));
        if (believed && real) mounted.push_back(key);
      }
    }
    check("attachedTo", attached);
    check("inUseOn", in_use);
    check("mountedFor", mounted);
  }

  void ExpectEvent(const YAML::Node& arg) {
    const std::string event = arg["event"].as<std::string>();
    int want = arg["count"] ? arg["count"].as<int>() : -1;
    int found = 0;
    for (const auto& e : c_.transcript().ToJson()) {
      if (e.value("type", "") == "event" && e.value("event", "") == event) ++found;
    }
    if ((want < 0 && found == 0) || (want >= 0 && found != want)) {
      throw std::runtime_error("event \"" + event + "\" seen " + std::to_string(found) +
                               " times, expected " +
                               (want < 0 ? "at least once" : std::to_string(want)));
    }
  }

  void ExpectCalls(const YAML::Node& arg) {
    int found = 0;
    for (const auto& call : c_.transcript().Calls()) {
      if (call.answered_from_cache) continue;
      if (arg["verb"] && call.verb != arg["verb"].as<std::string>()) continue;
      if (arg["node"] && call.node != arg["node"].as<std::string>()) continue;
      if (arg["component"] && call.component != arg["component"].as<std::string>()) continue;
      if (arg["withArg"] && std::find(call.argv.begin() + 1, call.argv.end(),
                                      arg["withArg"].as<std::string>()) == call.argv.end()) {
        continue;
      }
      ++found;
    }
    int want = arg["count"].as<int>();
    if (found != want) {
      throw std::runtime_error("calls matching " + YAML::Dump(arg) + " executed " +
                               std::to_string(found) + " times, expected " + std::to_string(want));
    }
  }

  Cluster& c_;
  fs::path base_;
  std::vector<std::string> last_errors_;
};

ClusterConfig ConfigFrom(const YAML::Node& doc, const ScenarioOptions& options) {
  ClusterConfig config;
  config.run_dir = options.run_dir;
  config.make_node = options.make_node;
  if (doc["profile"]) config.profile = doc["profile"].as<std::string>();
  if (const YAML::Node c = doc["controller"]) {
    if (c["syncPeriod"])
      config.controller.sync_period = ParseDuration(c["syncPeriod"].as<std::string>());
    if (c["maxWaitForUnmount"]) {
      config.controller.max_wait_for_unmount =
          ParseDuration(c["maxWaitForUnmount"].as<std::string>());
    }
    if (c["disableForceDetachOnTimeout"]) {
      config.controller.disable_force_detach_on_timeout =
          c["disableForceDetachOnTimeout"].as<bool>();
    }
  }
  if (const YAML::Node t = doc["timeouts"]) {
    if (t["call"]) config.call.harness_deadline = ParseDuration(t["call"].as<std::string>());
    if (t["waitForAttach"]) {
      config.call.waitforattach_timeout = ParseDuration(t["waitForAttach"].as<std::string>());
    }
  }
  return config;
}

void WriteTranscript(Cluster& cluster, const ScenarioOptions& options) {
  if (!options.transcript.empty()) cluster.transcript().WriteTo(options.transcript);
}

// Deletes every pod on a running node and settles: what a scenario left
// mounted and attached is given back, so what stays bound after is a leak.
std::vector<std::string> DrainPods(Cluster& cluster) {
  std::vector<std::pair<std::string, std::string>> pods;
  for (const auto& [key, pod] : cluster.state().pods) {
    if (!pod.node.empty() && cluster.node(pod.node).running()) pods.emplace_back(pod.ns, pod.name);
  }
  if (pods.empty()) return {};
  for (const auto& [ns, name] : pods) cluster.DeletePod(ns, name);
  return cluster.Settle();
}

// The driver calls whose reply kubelet could not use at all, each once
// per verb and node: an undecodable reply, or a call the harness stopped.
std::vector<std::string> UnusableReplies(const Transcript& transcript) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& r : transcript.Calls()) {
    std::string why;
    if (!r.harness_problem.empty()) {
      why = r.harness_problem;
    } else if (!r.answered_from_cache && r.verdict.outcome == Outcome::kDecodeError) {
      why = "the reply did not decode: " + r.verdict.error;
    }
    if (why.empty() || !seen.insert(r.component + " " + r.node + " " + r.verb).second) continue;
    out.push_back(r.verb + " by the " + r.component + " on " + r.node + ": " + why);
  }
  return out;
}

// Bound loop devices: "/dev/loop7" -> backing file.
std::map<std::string, std::string> BoundLoops() {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/block", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("loop", 0) != 0) continue;
    const std::string backing = platform::ReadFirstLine(e.path() / "loop" / "backing_file");
    if (!backing.empty()) out["/dev/" + name] = backing;
  }
  return out;
}

// The loop devices the driver named (a reply's device, a mount's source).
std::set<std::string> LoopsNamed(const Transcript& transcript) {
  std::set<std::string> out;
  auto add = [&out](const std::string& device) {
    if (device.rfind("/dev/loop", 0) == 0) out.insert(device);
  };
  for (const auto& r : transcript.Calls()) {
    if (r.verdict.status) add(r.verdict.status->device);
    for (const auto& m : r.mounts_added) add(m.source);
  }
  return out;
}

// Loop devices the driver named that are bound now and were not (to the
// same file) when the run began.
std::vector<std::string> LoopsLeft(const std::map<std::string, std::string>& before,
                                   const std::set<std::string>& named) {
  std::vector<std::string> out;
  for (const auto& [device, backing] : BoundLoops()) {
    const auto was = before.find(device);
    if (named.count(device) && (was == before.end() || was->second != backing))
      out.push_back("loop device left bound: " + device + " -> " + backing);
  }
  return out;
}

}  // namespace

namespace {

// The keys a scenario may have, checked before anything runs: a misspelt
// key would otherwise be ignored and the scenario pass without testing it.
void CheckKeys(const std::string& path, const YAML::Node& map, const std::string& what,
               const std::set<std::string>& allowed) {
  if (!map.IsMap()) {
    throw std::runtime_error(path + ":" + std::to_string(map.Mark().line + 1) + ": " + what +
                             " must be a mapping");
  }
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (allowed.count(key)) continue;
    std::string known;
    for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
    throw std::runtime_error(path + ":" + std::to_string(kv.first.Mark().line + 1) +
                             ": unknown key \"" + key + "\" in " + what + " (known: " + known +
                             ")");
  }
}

void CheckScenario(const std::string& path, const YAML::Node& doc) {
  CheckKeys(path, doc, "the scenario",
            {"driver", "driverName", "profile", "controller", "timeouts", "nodes", "steps"});
  if (doc["controller"])
    CheckKeys(path, doc["controller"], "controller",
              {"syncPeriod", "maxWaitForUnmount", "disableForceDetachOnTimeout"});
  if (doc["timeouts"]) CheckKeys(path, doc["timeouts"], "timeouts", {"call", "waitForAttach"});
  for (const auto& n : doc["nodes"])
    CheckKeys(path, n, "a node", {"name", "env", "kubeletManagedAttach"});
  const std::set<std::string> pod_file = {"pod", "volume", "file"};
  auto with = [&pod_file](std::set<std::string> keys) {
    keys.insert(pod_file.begin(), pod_file.end());
    return keys;
  };
  // Steps whose argument is a mapping, and its keys; the rest take a scalar.
  const std::map<std::string, std::set<std::string>> mapping_steps = {
      {"writeFile", with({"content"})},
      {"expectFile", with({"content"})},
      {"expectGroup", with({"gid"})},
      {"expectWriteFails", pod_file},
      {"expectVolume", {"volume", "attachedTo", "inUseOn", "mountedFor"}},
      {"expectEvent", {"event", "count"}},
      {"expectCalls", {"verb", "node", "component", "withArg", "count"}}};
  const std::set<std::string> scalar_steps = {
      "apply",         "applyFile",   "deletePod",      "settle",      "advance",
      "crashNode",     "restartNode", "restartKubelet", "stopKubelet", "startKubelet",
      "partitionNode", "healNode",    "expectSettled"};
  for (const auto& step : doc["steps"]) {
    const std::string line = path + ":" + std::to_string(step.Mark().line + 1);
    if (!step.IsMap() || step.size() != 1)
      throw std::runtime_error(line + ": a step is a mapping with one key, the step's name");
    const std::string op = step.begin()->first.as<std::string>();
    if (auto it = mapping_steps.find(op); it != mapping_steps.end()) {
      CheckKeys(path, step.begin()->second, op, it->second);
    } else if (!scalar_steps.count(op)) {
      std::string known;
      for (const auto& [name, keys] : mapping_steps) known += name + ", ";
      for (const auto& name : scalar_steps) known += name + ", ";
      throw std::runtime_error(line + ": unknown step \"" + op +
                               "\" (known: " + known.substr(0, known.size() - 2) + ")");
    }
  }
}

void RunSteps(Cluster& cluster, const YAML::Node& doc, const fs::path& base,
              const std::string& driver, const ScenarioOptions& options, ScenarioResult& result) {
  cluster.SetLog(options.log);
  for (const auto& n : doc["nodes"]) {
    std::map<std::string, std::string> env;
    if (n["env"]) env = n["env"].as<std::map<std::string, std::string>>();
    bool kubelet_managed = n["kubeletManagedAttach"] && n["kubeletManagedAttach"].as<bool>();
    cluster.AddNode(n["name"].as<std::string>(), !kubelet_managed, env);
  }
  std::string driver_name = options.driver_name;
  if (driver_name.empty() && doc["driverName"]) driver_name = doc["driverName"].as<std::string>();
  cluster.InstallDriver(driver, driver_name);

  Runner steps(cluster, base);
  for (const auto& step : doc["steps"]) {
    ++result.steps_run;
    std::string shown = YAML::Dump(step);
    if (options.log)
      options.log("step " + std::to_string(result.steps_run) + ": " +
                  shown.substr(0, shown.find('\n')));
    try {
      steps.Step(step);
    } catch (const std::exception& e) {
      result.failure = "step " + std::to_string(result.steps_run) + " (" +
                       shown.substr(0, shown.find('\n')) + "): " + e.what();
      cluster.transcript().AddEvent("step failed",
                                    {{"step", result.steps_run}, {"error", e.what()}});
      break;
    }
  }
  // A drain that cannot finish (a node left crashed, say) is the
  // scenario's choice; what it leaves bound is judged after.
  const auto drain_errors = DrainPods(cluster);
  if (!drain_errors.empty())
    cluster.transcript().AddEvent("pods deleted at the end", {{"errors", drain_errors}});
  result.problems = UnusableReplies(cluster.transcript());
  WriteTranscript(cluster, options);
}

}  // namespace

ScenarioResult RunScenario(const std::string& scenario_path, const ScenarioOptions& options) {
  YAML::Node doc = YAML::LoadFile(scenario_path);
  CheckScenario(scenario_path, doc);
  fs::path base = fs::absolute(scenario_path).parent_path();
  std::string driver = options.driver;
  if (driver.empty() && doc["driver"]) driver = (base / doc["driver"].as<std::string>()).string();
  if (driver.empty())
    throw std::runtime_error("scenario " + scenario_path + ": no driver (use --driver)");

  const auto loops_before = BoundLoops();
  ScenarioResult result;
  std::set<std::string> loops_named;
  {
    BoostProcessRunner process_runner;
    Cluster cluster(ConfigFrom(doc, options), options.runner ? *options.runner : process_runner);
    RunSteps(cluster, doc, base, driver, options, result);
    loops_named = LoopsNamed(cluster.transcript());
  }  // the nodes, their namespaces and processes end here
  for (auto& leak : LoopsLeft(loops_before, loops_named)) result.problems.push_back(leak);
  result.passed = result.failure.empty() && result.problems.empty();
  return result;
}

ScenarioResult ApplyManifest(const std::string& manifest_path, const std::string& driver,
                             const ScenarioOptions& options) {
  Manifest manifest = ParseManifest(platform::ReadWholeFile(manifest_path));
  BoostProcessRunner process_runner;
  ClusterConfig config;
  config.run_dir = options.run_dir;
  config.make_node = options.make_node;
  Cluster cluster(config, options.runner ? *options.runner : process_runner);
  cluster.SetLog(options.log);
  for (const auto& n : manifest.nodes) cluster.AddNode(n.name, n.controller_managed_attach);
  for (const auto& p : manifest.pods) {
    if (!p.node.empty()) cluster.AddNode(p.node);
  }
  cluster.InstallDriver(driver, options.driver_name);
  cluster.Apply(manifest);
  auto errors = cluster.Settle();
  ScenarioResult result;
  result.steps_run = 1;
  std::vector<std::string> unmounted;
  for (const auto& [key, pod] : cluster.state().pods) {
    for (const auto& v : pod.volumes) {
      std::string dir = cluster.kubelet(pod.node).PodVolumeDir(pod, v);
      if (!cluster.node(pod.node).filesystem().IsMountPoint(dir))
        unmounted.push_back(key + ":" + v.name);
    }
  }
  result.passed = unmounted.empty();
  if (!result.passed)
    result.failure = "not mounted: " + Join(unmounted) + "; errors: " + Join(errors);
  WriteTranscript(cluster, options);
  return result;
}

}  // namespace flexkit::sim
