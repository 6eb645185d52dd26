#include "simulator/shape_check.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>

#include "simulator/argv_builder.h"
#include "simulator/kubelet_paths.h"
#include "simulator/options_builder.h"
#include "simulator/plugin_name.h"

namespace flexkit::sim {
namespace {

// Markers for each kind of argument, put through flexsim's own ArgvBuilder
// to learn where that verb carries what.
const std::string kJson = "\x01json", kNode = "\x01node",
                  kDevice =
                      "\x01"
                      "device",
                  kPath = "\x01path", kVolume = "\x01volume", kNewSize = "\x01new",
                  kOldSize = "\x01old";
// Stands for a secret while flexsim rebuilds the options; its base64 form
// then becomes the shim's marker again.
const std::string kSecretStandIn = "\x02secret";

const std::set<std::string> kPodKeys = {"kubernetes.io/pod.name", "kubernetes.io/pod.namespace",
                                        "kubernetes.io/pod.uid",
                                        "kubernetes.io/serviceAccount.name"};
const std::set<std::string> kFsGroupKeys = {"kubernetes.io/fsGroup",
                                            "kubernetes.io/mounterArgs.FsGroup"};

bool IsMountOnlyKey(const std::string& key) {
  return kPodKeys.count(key) > 0 || kFsGroupKeys.count(key) > 0 ||
         key.rfind(kSecretKeyPrefix, 0) == 0;
}

std::string Clip(const std::string& s, std::size_t n = 160) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

std::optional<Args> Template(const ArgvBuilder& b, const std::string& verb) {
  try {
    if (verb == "init") return b.Init();
    if (verb == "getvolumename") return b.GetVolumeName(kJson);
    if (verb == "attach") return b.Attach(kJson, kNode);
    if (verb == "waitforattach") return b.WaitForAttach(kDevice, kJson);
    if (verb == "isattached") return b.IsAttached(kJson, kNode);
    if (verb == "mountdevice") return b.MountDevice(kPath, kDevice, kJson);
    if (verb == "mount") return b.Mount(kPath, kJson, kDevice);
    if (verb == "unmount") return b.Unmount(kPath);
    if (verb == "unmountdevice") return b.UnmountDevice(kPath);
    if (verb == "detach") return b.Detach(kVolume, kNode);
    if (verb == "expandvolume") return b.ExpandVolume(kJson, kPath, kNewSize, kOldSize);
    if (verb == "expandfs") return b.ExpandFs(kJson, kDevice, kPath, kNewSize, kOldSize);
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

std::optional<std::map<std::string, std::string>> StringMap(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : doc.items()) {
    if (!v.is_string()) return std::nullopt;
    out[k] = v.get<std::string>();
  }
  return out;
}

// kubelet's two path shapes, split into their parts.
struct PodDir {
  std::string root, uid, escaped_driver, volume;
};
std::optional<PodDir> SplitPodDir(const std::string& path) {
  const auto at = path.rfind("/pods/");
  if (at == std::string::npos) return std::nullopt;
  std::vector<std::string> parts;
  std::string rest = path.substr(at + 6);
  for (std::size_t start = 0;;) {
    const auto slash = rest.find('/', start);
    parts.push_back(rest.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 4 || parts[1] != "volumes") return std::nullopt;
  return PodDir{path.substr(0, at), parts[0], parts[2], parts[3]};
}
struct GlobalPath {
  std::string root, driver, volume;
};
std::optional<GlobalPath> SplitGlobalPath(const std::string& path) {
  static const std::string kMid = "/plugins/kubernetes.io/flexvolume/";
  const auto at = path.find(kMid);
  const auto mounts = path.rfind("/mounts/");
  if (at == std::string::npos || mounts == std::string::npos || mounts < at + kMid.size())
    return std::nullopt;
  return GlobalPath{path.substr(0, at), path.substr(at + kMid.size(), mounts - at - kMid.size()),
                    path.substr(mounts + 8)};
}

class Checker {
 public:
  Checker(const VersionProfile& profile, std::string driver_name)
      : profile_(profile), argv_(profile), driver_(std::move(driver_name)) {}

  void Check(const RecordedCall& call, std::vector<ShapeGap>& gaps) {
    auto gap = [&](const std::string& what) { gaps.push_back({call.line, call.verb, what}); };
    const auto shape = Template(argv_, call.verb);
    if (!shape) {
      gap("flexsim's " + profile_.name + " profile never calls " + call.verb);
      return;
    }
    if (shape->size() != call.args.size()) {
      gap("kubelet passed " + std::to_string(call.args.size() - 1) +
          " arguments after the verb, flexsim passes " + std::to_string(shape->size() - 1));
      return;
    }
    std::optional<std::map<std::string, std::string>> options;
    for (std::size_t i = 1; i < shape->size(); ++i) {
      if ((*shape)[i] != kJson) continue;
      options = StringMap(call.args[i]);
      if (!options) gap("the options argument is not a JSON object of strings");
    }
    for (std::size_t i = 1; i < shape->size(); ++i) {
      const std::string& kind = (*shape)[i];
      const std::string& value = call.args[i];
      if (kind == kNode && value.empty()) gap("an empty node name");
      if ((kind == kNewSize || kind == kOldSize) &&
          (value.empty() || value.find_first_not_of("0123456789") != std::string::npos))
        gap("size '" + Clip(value) + "' is not a decimal byte count");
      if (kind == kVolume && value.find('/') != std::string::npos)
        gap("detach got '" + Clip(value) + "'; flexsim sends the PV or volume name");
      if (kind == kPath) CheckPath(call, value, options, gap);
    }
    for (std::size_t i = 1; i < shape->size(); ++i) {
      if ((*shape)[i] == kJson && options) CheckOptions(call, call.args[i], *options, gap);
    }
  }

 private:
  void LearnDriver(const std::string& name) {
    if (driver_.empty()) driver_ = name;
  }

  void CheckPath(const RecordedCall& call, const std::string& path,
                 const std::optional<std::map<std::string, std::string>>& options,
                 const std::function<void(const std::string&)>& gap) {
    const bool pod_path = call.verb == "mount" || call.verb == "unmount" || call.verb == "expandfs";
    std::string expected, volume;
    if (pod_path) {
      const auto p = SplitPodDir(path);
      if (!p) {
        gap("'" + Clip(path) + "' is not kubelet's pod volume dir <root>/pods/<uid>/volumes/" +
            "<vendor~driver>/<volume>");
        return;
      }
      LearnDriver(UnescapeDriverName(p->escaped_driver));
      expected = KubeletPaths(p->root, driver_).PodVolumeDir(p->uid, p->volume);
      volume = p->volume;
      if (options && options->count("kubernetes.io/pod.uid") &&
          options->at("kubernetes.io/pod.uid") != p->uid)
        gap("the pod dir's uid " + p->uid + " is not the options' pod.uid " +
            options->at("kubernetes.io/pod.uid"));
    } else {
      const auto g = SplitGlobalPath(path);
      if (!g) {
        gap("'" + Clip(path) + "' is not kubelet's device mount path <root>/plugins/" +
            "kubernetes.io/flexvolume/<vendor>/<driver>/mounts/<volume>");
        return;
      }
      LearnDriver(g->driver);
      expected = KubeletPaths(g->root, driver_).DeviceMountPath(g->volume);
      volume = g->volume;
    }
    if (expected != path)
      gap("path '" + Clip(path) + "'; flexsim builds '" + Clip(expected) + "' for it");
    if (options && profile_.sends_pv_or_volume_name &&
        options->count("kubernetes.io/pvOrVolumeName") &&
        options->at("kubernetes.io/pvOrVolumeName") != volume)
      gap("the path names volume '" + volume + "', the options pvOrVolumeName '" +
          options->at("kubernetes.io/pvOrVolumeName") + "'");
  }

  void CheckOptions(const RecordedCall& call, const std::string& recorded,
                    const std::map<std::string, std::string>& opts,
                    const std::function<void(const std::string&)>& gap) {
    const bool mount = call.verb == "mount";
    VolumeSpec spec;
    MountExtras extras;
    extras.service_account.clear();
    for (const auto& [key, value] : opts) {
      if (key == "kubernetes.io/fsType") {
        spec.fs_type = value;
      } else if (key == "kubernetes.io/readwrite") {
        spec.read_only = value == "ro";
      } else if (key == "kubernetes.io/pvOrVolumeName") {
        spec.name = value;
      } else if (IsMountOnlyKey(key) && !mount) {
        continue;  // flexsim sends these to mount only: the comparison shows it
      } else if (key == "kubernetes.io/pod.name") {
        extras.pod_name = value;
      } else if (key == "kubernetes.io/pod.namespace") {
        extras.pod_namespace = value;
      } else if (key == "kubernetes.io/pod.uid") {
        extras.pod_uid = value;
      } else if (key == "kubernetes.io/serviceAccount.name") {
        extras.service_account = value;
      } else if (kFsGroupKeys.count(key) > 0) {
        try {
          extras.fs_group = std::stoll(value);
        } catch (const std::exception&) {
          gap("fsGroup '" + Clip(value) + "' is not a number");
        }
      } else if (key.rfind(kSecretKeyPrefix, 0) == 0) {
        extras.secret[key.substr(std::string(kSecretKeyPrefix).size())] = kSecretStandIn;
      } else {
        spec.options[key] = value;  // a user option
      }
    }
    std::string rebuilt = OptionsJson(profile_, spec, mount ? &extras : nullptr);
    const std::string stand_in = Base64(kSecretStandIn);
    for (std::size_t pos = 0; (pos = rebuilt.find(stand_in, pos)) != std::string::npos;)
      rebuilt.replace(pos, stand_in.size(), kRecordedSecret);
    if (rebuilt == recorded) return;
    const auto ours = StringMap(rebuilt);
    for (const auto& [key, value] : opts) {
      if (!ours->count(key)) {
        gap("kubelet sent option " + key + " to " + call.verb + "; flexsim's " + profile_.name +
            " profile does not");
      } else if (ours->at(key) != value) {
        gap("option " + key + ": kubelet sent '" + Clip(value) + "', flexsim sends '" +
            Clip(ours->at(key)) + "'");
      }
    }
    for (const auto& [key, value] : *ours)
      if (!opts.count(key))
        gap("flexsim's " + profile_.name + " profile sends option " + key + " to " + call.verb +
            "; kubelet did not");
    if (*ours == opts)
      gap("the same options in other bytes (key order, spacing or escaping): kubelet sent " +
          Clip(recorded) + ", flexsim sends " + Clip(rebuilt));
  }

  const VersionProfile& profile_;
  ArgvBuilder argv_;
  std::string driver_;
};

}  // namespace

std::vector<ShapeGap> CheckShapes(const std::vector<RecordedCall>& calls,
                                  const VersionProfile& profile, std::string driver_name) {
  Checker checker(profile, std::move(driver_name));
  std::vector<ShapeGap> gaps;
  for (const auto& call : calls) checker.Check(call, gaps);
  return gaps;
}

}  // namespace flexkit::sim
