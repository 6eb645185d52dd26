// [robustness]: hostile values (spaces, tabs, quotes, backslashes, commas,
// `=`, `$(...)`, backticks, `;`, a newline, a leading `-`, non-ASCII) in
// every input a driver really reads and a cluster can hold (F24): the
// values of the profile's secrets and options (or, with none declared, of
// the secret names drivers commonly read) and of one key nobody declares,
// and the kubelet root dir (the operator's --root-dir, so every path
// under it). Object
// names stay DNS-1123, as the API server enforces (cluster-facts §1). Each
// value carries canaries (files under the case dir a shell would create by
// executing part of it); every call checks none appeared. Also: volumes
// whose paths share a prefix (F25), concurrent calls on different volumes.
// Hangs and held pipes (F16, F17) are checked on every call of every case.
#include <cctype>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "conformance/catalog.h"
#include "conformance/helper_calls.h"

namespace flexkit::conform {
namespace {

// Hostile values for `input` ("secret x", "option share"), each with its
// own canaries; the last starts with '-' (an option to the next command).
std::vector<std::string> HostileValues(CaseContext& c, const std::string& input) {
  auto touch = [&c, &input](const std::string& how) {
    return "touch '" + c.Canary(input + " (" + how + ")") + "'";
  };
  return {"a value  with\tspaces, 'single' \"double\" \\back\\slash, k=v, ünïcødé — 日本語 $(" +
              touch("$(...)") + ") `" + touch("backticks") + "`; " + touch("; separator") + "\n" +
              touch("a newline"),
          "-o remount,rw,exec=" + touch("a leading -")};
}

// A key no profile declares, a valid shell name: a driver that turns every
// option or secret into a shell variable (`eval "$key=$value"`) evals it.
constexpr const char* kExtraKey = "flexconformHostile";

// The secret keys a hostile value goes into, one at a time: each declared
// one (the others keep their values, so the driver gets as far as it
// would), or with none declared, the names drivers commonly read.
std::vector<std::string> HostileSecretKeys(const DriverProfile& p) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : p.secrets) keys.push_back(key);
  if (keys.empty()) keys = {"username", "password"};
  keys.push_back(kExtraKey);
  return keys;
}

// A value that became mount options: its commas split it (`-o
// username=$user`), or its leading '-' made it one. Judged on what the
// mount helpers got, whether or not the mount then succeeded. An option
// named for mount options (mountOptions, options) is a list by design.
void CheckNotMadeOptions(CaseContext& c, const HelperRecorder& helpers, const std::string& input,
                         const std::string& value, std::set<std::string>& reported) {
  if (reported.count(input)) return;  // once per input, not once per hostile value
  std::string lower = input;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.rfind("option ", 0) == 0 && lower.find("option", 7) != std::string::npos) return;
  const std::string how = ValueAsOptions(helpers.Calls(), value);
  if (how.empty()) return;
  reported.insert(input);
  c.Record("F24 data-not-code: option values, secrets and paths are data, never code",
           input + ": its value " + how +
               " (a value can then add any mount option, rw or exec "
               "among them)");
}

// Runs one step of one hostile value's volume; a defect it shows is
// recorded and ends only that step. Each value is a volume of its own,
// which kubelet sets up and tears down on its own: a driver whose reply
// breaks on a quote is still judged on a leading '-', and on its secrets.
// True when the step ran to its end.
bool RecordedStep(const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const CaseFailure& e) {
    if (!e.recorded) throw;
    return false;
  }
}

void HostileSecretValues(CaseContext& c) {
  auto& n = c.node();
  HelperRecorder helpers(n, c.case_dir(), MountHelperDirs(c));
  std::set<std::string> reported;
  for (const auto& key : HostileSecretKeys(c.profile())) {
    for (const auto& value : HostileValues(c, "secret " + key)) {
      auto pod = c.Pod("pod");
      c.AddSecret(value);
      pod.secret[key] = value;
      helpers.Clear();
      std::optional<PodVolume> v;
      const bool set_up = RecordedStep([&] {
        v = SetUpOrRefused(c, n, c.Volume(c.Unique("vol")), pod,
                           "a hostile value of secret " + key);
      });
      CheckNotMadeOptions(c, helpers, "secret " + key, value, reported);
      if (set_up && v && !v->driver_mounted)
        c.Skip("capability: mount is Not supported, so the driver never sees secrets");
      if (set_up && v) RecordedStep([&] { CheckDataRoundTrip(c, *v); });
      RecordedStep([&] { TearDownAll(c); });
    }
  }
}

// Every option of the profile's volume, its freeTextOptions and one extra
// key, each in turn: what kubelet sees is judged (one JSON reply, nothing
// executed, no secret leaked), never whether the backend took the value.
std::vector<std::string> HostileOptionKeys(const DriverProfile& p) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : p.volume_options) keys.push_back(key);
  for (const auto& key : p.free_text_options) {
    if (!p.volume_options.count(key)) keys.push_back(key);
  }
  keys.push_back(kExtraKey);
  return keys;
}

void HostileOptionValues(CaseContext& c) {
  auto& n = c.node();
  HelperRecorder helpers(n, c.case_dir(), MountHelperDirs(c));
  std::set<std::string> reported;
  for (const auto& key : HostileOptionKeys(c.profile())) {
    for (const auto& value : HostileValues(c, "option " + key)) {
      auto spec = c.Volume(c.Unique("vol"));
      spec.options[key] = value;
      helpers.Clear();
      std::optional<PodVolume> v;
      const bool set_up = RecordedStep([&] {
        v = SetUpOrRefused(c, n, spec, c.Pod("pod"), "a hostile value of option " + key);
      });
      CheckNotMadeOptions(c, helpers, "option " + key, value, reported);
      if (set_up && v) RecordedStep([&] { CheckDataRoundTrip(c, *v); });
      RecordedStep([&] { TearDownAll(c); });
    }
  }
}

// The operator's --root-dir holds a space: every pod and global path does.
void KubeletRootWithSpace(CaseContext& c) {
  auto& n = c.node();
  const std::string root =
      std::filesystem::path(n.kubelet_root()).parent_path().string() + "/kubelet data";
  n.filesystem().MakeDirs(root, 0750);
  c.UseKubeletRoot(n, root);
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// vol and vol0: a substring match on mount paths (Azure smb's ismounted)
// takes one for the other.
void PrefixSharingPaths(CaseContext& c) {
  auto& n = c.node();
  const std::string base = c.Unique("vol");
  auto pod = c.Pod("pod");
  auto longer = c.SetUp(n, c.Volume(base + "0"), pod);
  auto shorter = c.SetUp(n, c.Volume(base), pod);
  if (!c.PodVolumeSetUp(n, shorter.pod_dir) && shorter.driver_mounted) {
    c.Fail("F25 exact-mount-state: mount state is exact, not a path prefix",
           "mount of " + shorter.pod_dir + " said Success but mounted nothing while " +
               longer.pod_dir + " was mounted");
  }
  CheckDataRoundTrip(c, shorter);
  c.tracker().RunNow(shorter.pod_undo);
  if (!c.PodVolumeSetUp(n, longer.pod_dir)) {
    c.Fail("F25 exact-mount-state: unmount touches only its own dir",
           "unmount of " + shorter.pod_dir + " unmounted " + longer.pod_dir);
  }
  CheckDataRoundTrip(c, longer);
  TearDownAll(c);
}

void ConcurrentVolumes(CaseContext& c) {
  auto& n = c.node();
  constexpr int kVolumes = 4;
  std::vector<std::exception_ptr> errors(kVolumes);
  std::vector<std::thread> threads;
  std::vector<sim::VolumeSpec> specs;
  std::vector<sim::MountExtras> pods;
  for (int i = 0; i < kVolumes; ++i) {
    specs.push_back(c.Volume(c.Unique("vol")));
    pods.push_back(c.Pod("pod"));
  }
  for (int i = 0; i < kVolumes; ++i) {
    threads.emplace_back([&, i] {
      try {
        auto v = c.SetUp(n, specs[i], pods[i]);
        CheckDataRoundTrip(c, v);
        c.tracker().RunNow(v.pod_undo);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  TearDownAll(c);
}

}  // namespace

void AddRobustnessCases(std::vector<Case>& cases) {
  cases.push_back({"robustness/hostile-secret-values",
                   {"robustness", "root"},
                   {"F20", "F21", "F24"},
                   Always,
                   HostileSecretValues});
  cases.push_back({"robustness/hostile-free-text-options",
                   {"robustness", "root"},
                   {"F24"},
                   Always,
                   HostileOptionValues});
  cases.push_back({"robustness/kubelet-root-with-space",
                   {"robustness", "root"},
                   {"F24"},
                   Always,
                   KubeletRootWithSpace});
  cases.push_back({"robustness/prefix-sharing-paths",
                   {"robustness", "root"},
                   {"F25"},
                   Always,
                   PrefixSharingPaths});
  cases.push_back({"robustness/concurrent-volumes",
                   {"robustness", "root"},
                   {"F26"},
                   Always,
                   ConcurrentVolumes});
}

}  // namespace flexkit::conform
