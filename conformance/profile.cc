#include "conformance/profile.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "conformance/catalog.h"
#include "conformance/default_profiles.h"
#include "platform/read_file.h"
#include "simulator/version_profile.h"

namespace flexkit::conform {
namespace {

class ProfileError : public std::runtime_error {
 public:
  ProfileError(const std::string& origin, const YAML::Node& at, const std::string& why)
      : std::runtime_error(origin + ":" + std::to_string(at.Mark().line + 1) + ": " + why) {}
};

// Every key a profile may have, by the mapping it sits in ("" the top
// level): a key is added here and read by ParseProfile or its helpers.
// Maps of free keys (volumeOptions, nodeEnv, secrets, invalidOptions) and
// skip (case names) are checked elsewhere.
const std::map<std::string, std::vector<std::string>>& ProfileKeys() {
  static const std::map<std::string, std::vector<std::string>> keys = [] {
    std::map<std::string, std::vector<std::string>> k = {
        {"", {"driver",        "driverName", "capabilities",     "attachManagement", "kubernetes",
              "volumeOptions", "fsTypes",    "invalidOptions",   "freeTextOptions",  "secrets",
              "nodes",         "nodeEnv",    "privileges",       "timeouts",         "skip",
              "install",       "fixture",    "controlPlanePath", "storage",          "liveNode",
              "podVolume",     "accessMode", "maxJobs"}},
        {"capabilities",
         {"attach", "selinuxRelabel", "supportsMetrics", "fsGroup", "requiresFSResize"}},
        {"fixture", {"kind", "setup", "teardown", "convoyFake", "mode", "hookTimeout", "api"}},
        {"liveNode", {"scratch"}},
        {"timeouts", {"default"}},  // and every verb
    };
    for (const auto& h : FixtureHookNames()) k["fixture"].push_back(h);
    for (const auto& v : KubeletVerbs()) k["timeouts"].push_back(v);
    return k;
  }();
  return keys;
}

// Edit distance, for "did you mean".
std::size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" for the nearest of `known` close enough to be a typo, or "".
std::string Nearest(const std::string& given, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 3) + 1;
  for (const auto& k : known) {
    if (const auto d = Distance(given, k); d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string Scalar(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

// Refuses keys the table does not list under `section`: a typo must not
// silently change a run.
void CheckKeys(const std::string& origin, const YAML::Node& map, const std::string& section) {
  const std::string where = section.empty() ? "the profile" : section;
  if (!map.IsMap())
    throw ProfileError(origin, map, where + " must be a mapping, not " + Scalar(map));
  const auto& allowed = ProfileKeys().at(section);
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string known;
    for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
    throw ProfileError(origin, kv.first,
                       "unknown key '" + key + "' in " + where + Nearest(key, allowed) +
                           " (known: " + known + ")");
  }
}

template <typename T>
const char* TypeName() {
  if constexpr (std::is_same_v<T, bool>) return "a boolean (true or false)";
  if constexpr (std::is_same_v<T, int>) return "an integer";
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, std::vector<std::string>>) return "a list of strings";
  return "another type";
}

template <typename T>
T As(const std::string& origin, const YAML::Node& node, const std::string& what) {
  // yaml-cpp reads a list or a mapping as no string; a scalar is any string.
  const bool shape_ok =
      std::is_same_v<T, std::vector<std::string>> ? node.IsSequence() : node.IsScalar();
  if (shape_ok) {
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
    }
  }
  throw ProfileError(origin, node, what + ": expected " + TypeName<T>() + ", got " + Scalar(node));
}

std::map<std::string, std::string> StringMap(const std::string& origin, const YAML::Node& node,
                                             const std::string& what) {
  if (!node.IsMap())
    throw ProfileError(origin, node, what + " must be a mapping, not " + Scalar(node));
  std::map<std::string, std::string> out;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    out[key] = As<std::string>(origin, kv.second, what + "." + key);
  }
  return out;
}

// The names skip: may give.
const std::vector<std::string>& CatalogCaseNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& c : Catalog()) out.push_back(c.name);
    return out;
  }();
  return names;
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

const std::vector<std::string>& KubeletVerbs() {
  static const std::vector<std::string> verbs = {
      "init",        "getvolumename", "attach", "detach",  "waitforattach", "isattached",
      "mountdevice", "unmountdevice", "mount",  "unmount", "expandvolume",  "expandfs"};
  return verbs;
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

namespace {

// A duration (ParseDuration's syntax) at `node`; a bad one names its line.
Millis DurationAt(const std::string& origin, const YAML::Node& node, const std::string& what) {
  try {
    return ParseDuration(As<std::string>(origin, node, what));
  } catch (const std::invalid_argument& e) {
    throw ProfileError(origin, node, e.what());
  }
}

// capabilities: the init reply expected, kubelet's defaults for keys not given.
sim::DriverCapabilities ReadCapabilities(const std::string& origin, const YAML::Node& caps) {
  CheckKeys(origin, caps, "capabilities");
  sim::DriverCapabilities c = sim::DriverCapabilities::Defaults();
  if (auto v = caps["attach"]) c.attach = As<bool>(origin, v, "capabilities.attach");
  if (auto v = caps["selinuxRelabel"])
    c.selinux_relabel = As<bool>(origin, v, "capabilities.selinuxRelabel");
  if (auto v = caps["supportsMetrics"])
    c.supports_metrics = As<bool>(origin, v, "capabilities.supportsMetrics");
  if (auto v = caps["fsGroup"]) c.fs_group = As<bool>(origin, v, "capabilities.fsGroup");
  if (auto v = caps["requiresFSResize"])
    c.requires_fs_resize = As<bool>(origin, v, "capabilities.requiresFSResize");
  return c;
}

// kubernetes: a simulator version profile the suite runs.
std::string ReadKubernetes(const std::string& origin, const YAML::Node& node) {
  const auto name = As<std::string>(origin, node, "kubernetes");
  const auto runnable = sim::ProfileNames();
  if (std::find(runnable.begin(), runnable.end(), name) == runnable.end()) {
    std::string known;
    for (const auto& k : runnable) known += (known.empty() ? "" : ", ") + k;
    throw ProfileError(origin, node,
                       "kubernetes: '" + name + "' is not a kubelet the suite runs" +
                           Nearest(name, runnable) + " (one of: " + known +
                           "; older kubelets' calls are checked with flexsim --kubernetes)");
  }
  return name;
}

// The driver and how it is called: driver, driverName, capabilities,
// attachManagement, controlPlanePath, kubernetes.
void ReadDriver(const std::string& origin, const YAML::Node& root, const std::string& base_dir,
                DriverProfile& p) {
  // A live node's profile may leave the driver to --driver.
  if (!root["driver"] && !root["liveNode"])
    throw ProfileError(origin, root, "'driver' (the executable) is required");
  if (auto n = root["driver"]) p.driver = Resolve(base_dir, As<std::string>(origin, n, "driver"));
  if (auto n = root["driverName"]) p.driver_name = As<std::string>(origin, n, "driverName");
  if (auto n = root["capabilities"]) p.capabilities = ReadCapabilities(origin, n);
  if (auto n = root["attachManagement"]) {
    auto v = As<std::string>(origin, n, "attachManagement");
    if (v != "controller" && v != "kubelet")
      throw ProfileError(origin, n, "attachManagement must be 'controller' or 'kubelet'");
    p.kubelet_managed_attach = v == "kubelet";
  }
  if (auto n = root["controlPlanePath"])
    p.control_plane_path = As<std::string>(origin, n, "controlPlanePath");
  if (auto n = root["kubernetes"]) p.kubernetes = ReadKubernetes(origin, n);
}

// What the test volume is given: volumeOptions, fsTypes, invalidOptions,
// freeTextOptions, secrets.
void ReadVolumeOptions(const std::string& origin, const YAML::Node& root, DriverProfile& p) {
  if (auto n = root["volumeOptions"]) p.volume_options = StringMap(origin, n, "volumeOptions");
  if (auto n = root["fsTypes"]) p.fs_types = As<std::vector<std::string>>(origin, n, "fsTypes");
  if (auto n = root["invalidOptions"]) p.invalid_options = StringMap(origin, n, "invalidOptions");
  if (auto n = root["freeTextOptions"])
    p.free_text_options = As<std::vector<std::string>>(origin, n, "freeTextOptions");
  if (auto n = root["secrets"]) p.secrets = StringMap(origin, n, "secrets");
}

// The nodes and what running them takes: nodes, nodeEnv, privileges.
void ReadNodes(const std::string& origin, const YAML::Node& root, DriverProfile& p) {
  if (auto n = root["nodes"]) {
    p.nodes = As<int>(origin, n, "nodes");
    if (p.nodes < 1 || p.nodes > 8) throw ProfileError(origin, n, "nodes must be 1..8");
  }
  if (auto n = root["nodeEnv"]) p.node_env = StringMap(origin, n, "nodeEnv");
  if (auto n = root["maxJobs"]) {
    p.max_jobs = As<int>(origin, n, "maxJobs");
    if (p.max_jobs < 1) throw ProfileError(origin, n, "maxJobs must be 1 or more");
  }
  if (auto n = root["privileges"]) {
    auto v = As<std::string>(origin, n, "privileges");
    if (v != "root" && v != "none")
      throw ProfileError(origin, n, "privileges must be 'root' or 'none'");
    p.needs_root = v == "root";
  }
}

// timeouts: default and per verb.
void ReadTimeouts(const std::string& origin, const YAML::Node& timeouts, DriverProfile& p) {
  CheckKeys(origin, timeouts, "timeouts");
  for (const auto& kv : timeouts) {
    const auto verb = kv.first.as<std::string>();
    const Millis d = DurationAt(origin, kv.second, "timeouts." + verb);
    if (verb == "default") {
      p.default_timeout = d;
    } else {
      p.verb_timeouts[verb] = d;
    }
  }
}

// skip: case name -> reason, each name one the catalog has.
std::map<std::string, std::string> ReadSkip(const std::string& origin, const YAML::Node& skip) {
  auto reasons = StringMap(origin, skip, "skip");
  const auto names = CatalogCaseNames();
  for (const auto& kv : skip) {
    const auto name = kv.first.as<std::string>();
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw ProfileError(origin, kv.first,
                         "skip: no case is named '" + name + "'" + Nearest(name, names) +
                             " (flexconform --list names them)");
  }
  return reasons;
}

// fixture given as a mapping: its hooks first, then its other keys.
void ReadFixtureMapping(const std::string& origin, const YAML::Node& f, const std::string& base_dir,
                        FixtureSpec& fixture) {
  CheckKeys(origin, f, "fixture");
  for (const auto& h : FixtureHookNames()) {
    if (auto v = f[h]) {
      fixture.hooks[h] = As<std::string>(origin, v, "fixture." + h);
      if (fixture.hooks[h].empty())
        throw ProfileError(origin, v, "fixture." + h + " must be a command");
    }
  }
  if (auto v = f["kind"]) fixture.kind = As<std::string>(origin, v, "fixture.kind");
  if (auto v = f["setup"]) fixture.setup = As<std::string>(origin, v, "fixture.setup");
  if (auto v = f["teardown"]) fixture.teardown = As<std::string>(origin, v, "fixture.teardown");
  if (auto v = f["convoyFake"])
    fixture.convoy_fake = Resolve(base_dir, As<std::string>(origin, v, "fixture.convoyFake"));
  if (auto v = f["hookTimeout"]) fixture.hook_timeout = DurationAt(origin, v, "hookTimeout");
  if (auto v = f["mode"]) fixture.mode = As<std::string>(origin, v, "fixture.mode");
  if (auto v = f["api"]) {
    fixture.api = As<std::string>(origin, v, "fixture.api");
    if (fixture.api != "stock" && fixture.api != "extended")
      throw ProfileError(origin, v,
                         "fixture.api must be stock (Convoy v0.5.2 as released) or extended "
                         "(with the Kubernetes extensions), not '" +
                             fixture.api + "'");
    if (fixture.kind != "convoy-fake")
      throw ProfileError(origin, v,
                         "fixture.api says which Convoy convoy-fake plays, so it needs "
                         "kind: convoy-fake");
  }
}

// fixture: a kind alone (a scalar) or a mapping; then checked as a whole.
void ReadFixture(const std::string& origin, const YAML::Node& f, const std::string& base_dir,
                 FixtureSpec& fixture) {
  if (f.IsScalar()) {
    fixture.kind = As<std::string>(origin, f, "fixture");
  } else {
    ReadFixtureMapping(origin, f, base_dir, fixture);
  }
  if (fixture.kind != "none" && fixture.kind != "convoy-fake" && fixture.kind != "command")
    throw ProfileError(origin, f, "fixture must be none, convoy-fake or command");
  if (fixture.kind == "command" && fixture.setup.empty())
    throw ProfileError(origin, f, "a command fixture needs 'setup'");
  if (fixture.kind != "command" && !fixture.hooks.empty())
    throw ProfileError(
        origin, f, "hooks (" + fixture.hooks.begin()->first + ", ...) belong to a command fixture");
}

// liveNode: its scratch path, normalised; and the nodes and fixture already
// read must suit a real node.
void ReadLiveNode(const std::string& origin, const YAML::Node& root, const YAML::Node& n,
                  DriverProfile& p) {
  CheckKeys(origin, n, "liveNode");
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

// What a volume is across nodes and in the pod: accessMode, storage, podVolume.
void ReadVolumeSharing(const std::string& origin, const YAML::Node& root, DriverProfile& p) {
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
}

}  // namespace

DriverProfile ParseProfile(const std::string& yaml_text, const std::string& origin,
                           const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  CheckKeys(origin, root, "");
  DriverProfile p;
  ReadDriver(origin, root, base_dir, p);
  ReadVolumeOptions(origin, root, p);
  ReadNodes(origin, root, p);
  if (auto n = root["timeouts"]) ReadTimeouts(origin, n, p);
  if (auto n = root["skip"]) p.skip = ReadSkip(origin, n);
  if (auto n = root["install"]) {
    p.install = As<std::vector<std::string>>(origin, n, "install");
    if (p.install.empty()) throw ProfileError(origin, n, "install must name a command");
  }
  if (auto n = root["fixture"]) ReadFixture(origin, n, base_dir, p.fixture);
  // After nodes and fixture: it checks them.
  if (auto n = root["liveNode"]) ReadLiveNode(origin, root, n, p);
  ReadVolumeSharing(origin, root, p);
  return p;
}

DriverProfile LoadProfile(const std::string& path) {
  std::string text;
  try {
    text = platform::ReadWholeFile(path);
  } catch (const std::system_error& e) {
    throw std::runtime_error("read profile: " + std::string(e.what()));
  }
  return ParseProfile(text, path, std::filesystem::path(path).parent_path().string());
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
