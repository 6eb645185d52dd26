#include "conformance/profile.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "conformance/default_profiles.h"

namespace flexkit::conform {
namespace {

class ProfileError : public std::runtime_error {
 public:
  ProfileError(const std::string& origin, const YAML::Node& at, const std::string& why)
      : std::runtime_error(origin + ":" + std::to_string(at.Mark().line + 1) + ": " + why) {}
};

// Refuses keys outside `allowed`: a typo must not silently change a run.
void CheckKeys(const std::string& origin, const YAML::Node& map, const std::string& where,
               const std::set<std::string>& allowed) {
  if (!map.IsMap()) throw ProfileError(origin, map, where + " must be a mapping");
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string known;
      for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
      throw ProfileError(origin, kv.first,
                         "unknown key '" + key + "' in " + where + " (known: " + known + ")");
    }
  }
}

template <typename T>
T As(const std::string& origin, const YAML::Node& node, const std::string& what) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw ProfileError(origin, node, what + ": wrong type");
  }
}

std::map<std::string, std::string> StringMap(const std::string& origin, const YAML::Node& node,
                                             const std::string& what) {
  if (!node.IsMap()) throw ProfileError(origin, node, what + " must be a mapping");
  std::map<std::string, std::string> out;
  for (const auto& kv : node) {
    out[kv.first.as<std::string>()] = As<std::string>(origin, kv.second, what);
  }
  return out;
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

}  // namespace

Millis ParseDuration(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("duration '" + text + "': not a number");
  }
  const std::string unit = text.substr(used);
  double ms = 0;
  if (unit.empty() || unit == "s") {
    ms = value * 1000;
  } else if (unit == "ms") {
    ms = value;
  } else if (unit == "m") {
    ms = value * 60000;
  } else {
    throw std::invalid_argument("duration '" + text + "': unit must be ms, s or m");
  }
  if (ms <= 0) throw std::invalid_argument("duration '" + text + "': must be positive");
  return Millis(static_cast<long long>(ms));
}

const std::vector<std::string>& FixtureHookNames() {
  static const std::vector<std::string> names = {"nodeStart", "nodeStop", "crash",      "restart",
                                                 "partition", "heal",     "attachments"};
  return names;
}

bool FixtureHas(const FixtureSpec& spec, const std::string& name) {
  if (spec.kind == "convoy-fake") return true;
  return spec.kind == "command" && spec.hooks.count(name) > 0;
}

Millis DriverProfile::TimeoutFor(const std::string& verb) const {
  auto it = verb_timeouts.find(verb);
  return it == verb_timeouts.end() ? default_timeout : it->second;
}

DriverProfile ParseProfile(const std::string& yaml_text, const std::string& origin,
                           const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  CheckKeys(origin, root, "the profile",
            {"driver",        "driverName", "capabilities",     "attachManagement", "kubernetes",
             "volumeOptions", "fsTypes",    "invalidOptions",   "freeTextOptions",  "secrets",
             "nodes",         "nodeEnv",    "privileges",       "timeouts",         "skip",
             "install",       "fixture",    "controlPlanePath", "storage",          "liveNode",
             "podVolume",     "accessMode"});
  DriverProfile p;
  if (!root["driver"] && !root["liveNode"])
    throw ProfileError(origin, root, "'driver' (the executable) is required");
  if (auto n = root["driver"]) p.driver = Resolve(base_dir, As<std::string>(origin, n, "driver"));
  if (auto n = root["driverName"]) p.driver_name = As<std::string>(origin, n, "driverName");
  if (auto caps = root["capabilities"]) {
    CheckKeys(origin, caps, "capabilities",
              {"attach", "selinuxRelabel", "supportsMetrics", "fsGroup", "requiresFSResize"});
    sim::DriverCapabilities c = sim::DriverCapabilities::Defaults();
    if (auto v = caps["attach"]) c.attach = As<bool>(origin, v, "capabilities.attach");
    if (auto v = caps["selinuxRelabel"]) c.selinux_relabel = As<bool>(origin, v, "selinuxRelabel");
    if (auto v = caps["supportsMetrics"])
      c.supports_metrics = As<bool>(origin, v, "supportsMetrics");
    if (auto v = caps["fsGroup"]) c.fs_group = As<bool>(origin, v, "fsGroup");
    if (auto v = caps["requiresFSResize"])
      c.requires_fs_resize = As<bool>(origin, v, "requiresFSResize");
    p.capabilities = c;
  }
  if (auto n = root["attachManagement"]) {
    auto v = As<std::string>(origin, n, "attachManagement");
    if (v != "controller" && v != "kubelet")
      throw ProfileError(origin, n, "attachManagement must be 'controller' or 'kubelet'");
    p.kubelet_managed_attach = v == "kubelet";
  }
  if (auto n = root["controlPlanePath"])
    p.control_plane_path = As<std::string>(origin, n, "controlPlanePath");
  if (auto n = root["kubernetes"]) p.kubernetes = As<std::string>(origin, n, "kubernetes");
  if (auto n = root["volumeOptions"]) p.volume_options = StringMap(origin, n, "volumeOptions");
  if (auto n = root["fsTypes"]) p.fs_types = As<std::vector<std::string>>(origin, n, "fsTypes");
  if (auto n = root["invalidOptions"]) p.invalid_options = StringMap(origin, n, "invalidOptions");
  if (auto n = root["freeTextOptions"])
    p.free_text_options = As<std::vector<std::string>>(origin, n, "freeTextOptions");
  if (auto n = root["secrets"]) p.secrets = StringMap(origin, n, "secrets");
  if (auto n = root["nodes"]) {
    p.nodes = As<int>(origin, n, "nodes");
    if (p.nodes < 1 || p.nodes > 8) throw ProfileError(origin, n, "nodes must be 1..8");
  }
  if (auto n = root["nodeEnv"]) p.node_env = StringMap(origin, n, "nodeEnv");
  if (auto n = root["privileges"]) {
    auto v = As<std::string>(origin, n, "privileges");
    if (v != "root" && v != "none")
      throw ProfileError(origin, n, "privileges must be 'root' or 'none'");
    p.needs_root = v == "root";
  }
  if (auto n = root["timeouts"]) {
    if (!n.IsMap()) throw ProfileError(origin, n, "timeouts must be a mapping");
    for (const auto& kv : n) {
      const auto verb = kv.first.as<std::string>();
      Millis d;
      try {
        d = ParseDuration(As<std::string>(origin, kv.second, "timeouts." + verb));
      } catch (const std::invalid_argument& e) {
        throw ProfileError(origin, kv.second, e.what());
      }
      if (verb == "default") {
        p.default_timeout = d;
      } else {
        p.verb_timeouts[verb] = d;
      }
    }
  }
  if (auto n = root["skip"]) p.skip = StringMap(origin, n, "skip");
  if (auto n = root["install"]) {
    p.install = As<std::vector<std::string>>(origin, n, "install");
    if (p.install.empty()) throw ProfileError(origin, n, "install must name a command");
  }
  if (auto f = root["fixture"]) {
    if (f.IsScalar()) {
      p.fixture.kind = f.as<std::string>();
    } else {
      std::set<std::string> allowed{"kind", "setup",       "teardown", "convoyFake",
                                    "mode", "hookTimeout", "api"};
      for (const auto& h : FixtureHookNames()) allowed.insert(h);
      CheckKeys(origin, f, "fixture", allowed);
      for (const auto& h : FixtureHookNames()) {
        if (auto v = f[h]) {
          p.fixture.hooks[h] = As<std::string>(origin, v, "fixture." + h);
          if (p.fixture.hooks[h].empty())
            throw ProfileError(origin, v, "fixture." + h + " must be a command");
        }
      }
      if (auto v = f["kind"]) p.fixture.kind = As<std::string>(origin, v, "fixture.kind");
      if (auto v = f["setup"]) p.fixture.setup = As<std::string>(origin, v, "fixture.setup");
      if (auto v = f["teardown"])
        p.fixture.teardown = As<std::string>(origin, v, "fixture.teardown");
      if (auto v = f["convoyFake"])
        p.fixture.convoy_fake = Resolve(base_dir, As<std::string>(origin, v, "fixture.convoyFake"));
      if (auto v = f["hookTimeout"]) {
        try {
          p.fixture.hook_timeout = ParseDuration(As<std::string>(origin, v, "hookTimeout"));
        } catch (const std::invalid_argument& e) {
          throw ProfileError(origin, v, e.what());
        }
      }
      if (auto v = f["mode"]) p.fixture.mode = As<std::string>(origin, v, "fixture.mode");
      if (auto v = f["api"]) {
        p.fixture.api = As<std::string>(origin, v, "fixture.api");
        if (p.fixture.api != "stock" && p.fixture.api != "extended")
          throw ProfileError(origin, v,
                             "fixture.api must be stock (Convoy v0.5.2 as released) or extended "
                             "(with the Kubernetes extensions), not '" +
                                 p.fixture.api + "'");
        if (p.fixture.kind != "convoy-fake")
          throw ProfileError(origin, v,
                             "fixture.api says which Convoy convoy-fake plays, so it needs "
                             "kind: convoy-fake");
      }
    }
    if (p.fixture.kind != "none" && p.fixture.kind != "convoy-fake" && p.fixture.kind != "command")
      throw ProfileError(origin, f, "fixture must be none, convoy-fake or command");
    if (p.fixture.kind == "command" && p.fixture.setup.empty())
      throw ProfileError(origin, f, "a command fixture needs 'setup'");
    if (p.fixture.kind != "command" && !p.fixture.hooks.empty())
      throw ProfileError(
          origin, f,
          "hooks (" + p.fixture.hooks.begin()->first + ", ...) belong to a command fixture");
  }
  if (auto n = root["liveNode"]) {
    CheckKeys(origin, n, "liveNode", {"scratch"});
    if (!n["scratch"])
      throw ProfileError(origin, n, "liveNode needs 'scratch' (where the case directories go)");
    p.live_node_scratch = As<std::string>(origin, n["scratch"], "liveNode.scratch");
    const auto scratch = std::filesystem::path(p.live_node_scratch).lexically_normal();
    if (!scratch.is_absolute() || scratch == scratch.root_path())
      throw ProfileError(origin, n["scratch"],
                         "liveNode.scratch must be an absolute path below / (the node's "
                         "hostPath scratch area), not '" +
                             p.live_node_scratch + "'");
    p.live_node_scratch = scratch.string();
    if (p.live_node_scratch.size() > 1 && p.live_node_scratch.back() == '/')
      p.live_node_scratch.pop_back();
    if (p.nodes != 1)
      throw ProfileError(origin, root["nodes"] ? root["nodes"] : n,
                         "liveNode: a live node is one node, so nodes must be 1");
    if (p.fixture.kind == "convoy-fake")
      throw ProfileError(origin, root["fixture"],
                         "liveNode: the driver uses the node's real backend, not the convoy-fake "
                         "fixture (none, or a command fixture)");
  }
  if (auto n = root["accessMode"]) {
    const std::string mode = As<std::string>(origin, n, "accessMode");
    if (mode != "ReadWriteOnce" && mode != "ReadWriteMany")
      throw ProfileError(origin, n,
                         "accessMode must be ReadWriteOnce (one node at a time) or ReadWriteMany "
                         "(several nodes may mount a volume at once), not '" +
                             mode + "'");
    p.read_write_many = mode == "ReadWriteMany";
  }
  if (auto n = root["storage"]) {
    p.storage = As<std::string>(origin, n, "storage");
    if (p.storage != "shared" && p.storage != "node-local" && p.storage != "ephemeral")
      throw ProfileError(origin, n, "storage must be shared, node-local or ephemeral");
  }
  if (auto n = root["podVolume"]) {
    const auto kind = As<std::string>(origin, n, "podVolume");
    if (kind != "mount" && kind != "directory")
      throw ProfileError(origin, n,
                         "podVolume must be mount (mount leaves a mount at the pod dir) or "
                         "directory (mount fills the pod dir, mounting nothing)");
    p.pod_volume_is_directory = kind == "directory";
  }
  return p;
}

DriverProfile LoadProfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("read profile " + path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return ParseProfile(text.str(), path, std::filesystem::path(path).parent_path().string());
}

DriverProfile ResolveProfile(const ProfileChoice& choice) {
  DriverProfile profile;
  if (!choice.profile_path.empty()) {
    profile = LoadProfile(choice.profile_path);
    if (!choice.driver.empty()) profile.driver = choice.driver;
  } else if (!choice.driver.empty()) {
    profile.driver = choice.driver;
    // Two nodes, so that [sequence] covers two and [failover] can move a pod.
    profile.kubelet_managed_attach = false;
    profile.nodes = 2;
  } else {
    profile = choice.bundled == "stock" ? BundledStockConvoyProfile(choice.flexconform_dir)
                                        : BundledConvoyProfile(choice.flexconform_dir);
  }
  if (profile.driver.empty()) {
    throw std::runtime_error("the profile " + choice.profile_path +
                             " names no driver; give it with --driver (a liveNode profile takes "
                             "the one installed on the node)");
  }
  profile.driver = std::filesystem::absolute(profile.driver).lexically_normal().string();
  if (profile.driver_name.empty()) profile.driver_name = DriverNameFor(profile.driver);
  if (!choice.timeout.empty()) {
    try {
      profile.default_timeout = ParseDuration(choice.timeout);
    } catch (const std::exception& e) {
      throw std::runtime_error("--timeout " + choice.timeout + ": " + e.what());
    }
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(profile.driver, ec) ||
      ::access(profile.driver.c_str(), X_OK) != 0)
    throw std::runtime_error("driver " + profile.driver + " is not an executable file");
  return profile;
}

}  // namespace flexkit::conform
