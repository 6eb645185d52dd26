#include "driver/convoy/convoy_driver.h"

#include <sys/mount.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "driver/convoy/names.h"
#include "driver/sdk/logging.h"

namespace convoy_flexvolume {
namespace {

using flexvolume::DriverStatus;
using flexvolume::Fail;
using flexvolume::NotSupported;
using flexvolume::Options;
using flexvolume::Succeed;

constexpr std::chrono::milliseconds kPollInterval{100};

// kubelet <= 1.5 passed no node name.
std::string NodeKey(const std::string& node) { return node.empty() ? "_local" : node; }

// Runs `body`, turning any exception into a Failure prefixed with `what`
// (the verb, the volume and the node).
template <typename Body>
DriverStatus Guarded(const std::string& what, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    flexvolume::LogWarn(what + ": " + e.what());
    return Fail(what + ": " + e.what());
  }
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// A record key for any text (a path, a daemon): FNV-1a 64 in hex, stable
// across builds; the record keeps the text itself to rule out a collision.
std::string KeyOf(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string StockFsRefusal(const VolumeSpec& spec) {
  return "kubernetes.io/fsType asks for " + spec.fs_type +
         ", but stock Convoy v0.5.2 formats EBS volumes as ext4 only and ignores the request; "
         "use ext4, or a Convoy daemon with the Kubernetes extensions (api: extended)";
}

// Stock v0.5.2's vfs driver refuses any caller-chosen mount point.
bool IsStockVfsRefusal(const ConvoyError& e) {
  return e.status() == 400 && std::string(e.what()).find(
                                  "VFS doesn't support specified mount point") != std::string::npos;
}

// The cloud refused an attach because another instance has the volume.
bool IsAttachedElsewhere(const ConvoyError& e) {
  const std::string text = e.what();
  return text.find("VolumeInUse") != std::string::npos ||
         text.find("already attached") != std::string::npos;
}

}  // namespace

void SystemClock::SleepFor(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

ConvoyDriver::ConvoyDriver(Config config, std::string config_error, DriverDeps deps)
    : config_(std::move(config)),
      config_error_(std::move(config_error)),
      deps_(deps),
      names_(config_.state_dir + "/names"),
      volume_ids_(config_.state_dir + "/ebs-volume-ids"),
      daemon_apis_(config_.state_dir + "/daemon-api"),
      bind_mounts_(config_.state_dir + "/bind-mounts"),
      vfs_attachments_(config_.state_dir + "/vfs-attachments") {}

template <typename What, typename Body>
DriverStatus ConvoyDriver::RunVerb(const VerbRules& rules, What what, Body body) {
  if (!config_error_.empty()) return Fail(config_error_);
  if (rules.mode && config_.mode != *rules.mode) {
    // In attach mode kubelet expects mount and unmount to be Not supported
    // (it bind-mounts the global path itself): that answer has no message.
    return NotSupported(*rules.mode == Mode::kAttach
                            ? std::string(rules.verb) +
                                  ": convoy-flexvolume runs in mount-only mode"
                            : "");
  }
  VolumeSpec spec;
  if (rules.opts != nullptr) {
    try {
      spec = ParseVolumeSpec(*rules.opts);
    } catch (const std::invalid_argument& e) {
      return Fail(std::string(rules.verb) + ": " + e.what());
    }
  }
  if (rules.path != nullptr && (rules.path->empty() || (*rules.path)[0] != '/'))
    return Fail(std::string(rules.verb) + ": " + rules.path_rule);
  return Guarded(what(spec), [&] { return body(spec); });
}

Api ConvoyDriver::ApiOf(ConvoyClient& client) {
  if (config_.api != Api::kAuto) return config_.api;
  const std::string endpoint = client.Endpoint();
  if (auto it = apis_.find(endpoint); it != apis_.end()) return it->second;
  const std::string instance = client.DaemonInstance();
  if (!instance.empty()) {
    if (auto cached = daemon_apis_.Get({KeyOf(endpoint)})) {
      // "<endpoint>\n<instance> <api>": valid only for this run of the daemon.
      const std::string want = endpoint + "\n" + instance + " ";
      if (cached->rfind(want, 0) == 0) {
        const std::string name = cached->substr(want.size());
        if (name == "stock" || name == "extended") {
          return apis_[endpoint] = name == "stock" ? Api::kStock : Api::kExtended;
        }
      }
    }
  }
  const ApiProbe probe = client.ProbeApi();
  if (probe.kind == ApiProbe::Kind::kUnknown) {
    flexvolume::LogWarn(
        endpoint + ": cannot tell stock Convoy from one with the Kubernetes extensions (" +
        probe.evidence + "); assuming the extensions until a mount shows otherwise");
    return apis_[endpoint] = Api::kExtended;
  }
  const Api api = probe.kind == ApiProbe::Kind::kStock ? Api::kStock : Api::kExtended;
  RememberApi(client, api, probe.evidence);
  return api;
}

void ConvoyDriver::RememberApi(ConvoyClient& client, Api api, const std::string& why) {
  const std::string endpoint = client.Endpoint();
  apis_[endpoint] = api;
  flexvolume::LogInfo(
      endpoint + " is " +
      (api == Api::kStock ? "stock Convoy v0.5.2" : "Convoy with the Kubernetes extensions") +
      " (api auto, kept until the daemon restarts): " + why);
  const std::string instance = client.DaemonInstance();
  if (instance.empty()) return;
  try {
    daemon_apis_.Put({KeyOf(endpoint)}, endpoint + "\n" + instance + " " + ApiName(api));
  } catch (const std::exception& e) {
    flexvolume::LogWarn(endpoint + ": cannot keep its API in " + config_.state_dir + ": " +
                        e.what());
  }
}

std::optional<std::string> ConvoyDriver::BindMountAt(const std::string& dir) const {
  const std::string path = Canonical(dir);
  auto record = bind_mounts_.Get({KeyOf(path)});
  if (!record) return std::nullopt;
  const size_t nl = record->find('\n');
  if (nl == std::string::npos || record->substr(nl + 1) != path) return std::nullopt;
  return record->substr(0, nl);
}

DriverStatus ConvoyDriver::Init() {
  return RunVerb(
      {.verb = "init"}, [](const VolumeSpec&) { return std::string("init"); },
      [&](const VolumeSpec&) {
        DriverStatus s = Succeed();
        flexvolume::Capabilities caps;
        caps.attach = config_.mode == Mode::kAttach;
        caps.supports_metrics = true;
        caps.requires_fs_resize = false;  // expandfs is not supported
        s.capabilities = caps;
        return s;
      });
}

DriverStatus ConvoyDriver::GetVolumeName(const Options&) {
  // kubelet ignores the answer; Not supported stops it asking.
  return NotSupported();
}

std::unique_ptr<ConvoyClient> ConvoyDriver::LocalClient() {
  return deps_.clients->ForSocket(config_.socket);
}

std::unique_ptr<ConvoyClient> ConvoyDriver::ClientForNode(const std::string& node) {
  return deps_.clients->ForSocket(config_.SocketForNode(node));
}

std::optional<flexvolume::MountEntry> ConvoyDriver::MountAt(const std::string& dir) {
  std::optional<flexvolume::MountEntry> found;
  std::string err;
  if (!deps_.mounter->FindMount(dir, &found, &err)) throw std::runtime_error(err);
  return found;
}

void ConvoyDriver::MountOrThrow(const std::string& source, const std::string& target,
                                unsigned long flags, const std::string& what) {
  std::string err;
  if (!deps_.mounter->Mount(source, target, "", flags, "", &err))
    throw std::runtime_error(what + ": " + err);
}

void ConvoyDriver::UnmountOrThrow(const std::string& dir) {
  std::string err;
  if (!deps_.mounter->Unmount(dir, &err)) throw std::runtime_error(err);
}

bool ConvoyDriver::IsMountPoint(const std::string& dir) { return MountAt(dir).has_value(); }

VolumeInfo ConvoyDriver::EnsureAttached(ConvoyClient& client, const VolumeSpec& spec,
                                        bool* created) {
  *created = false;
  const Api api = spec.driver == "ebs" ? ApiOf(client) : Api::kExtended;
  if (api == Api::kStock && spec.fs_type_requested && spec.fs_type != "ext4")
    throw std::runtime_error(StockFsRefusal(spec));
  CreateRequest req;
  req.extensions = api != Api::kStock;
  req.name = spec.name;
  req.driver_name = spec.driver;
  req.driver_volume_id = spec.volume_id;
  req.type = spec.volume_type;
  // Unset, the daemon formats a blank device as ext4 and takes any existing
  // filesystem; set, it refuses a device that holds another one.
  req.fs_type = spec.fs_type_requested ? spec.fs_type : "";
  req.size = spec.size_bytes;
  req.iops = spec.iops;
  if (auto existing = client.Inspect(spec.name)) {
    if (existing->IsAttached()) return *existing;
    // Known here but no longer attached (the daemon reconciled it away):
    // drop the stale reference and adopt the same EBS volume again.
    auto id = existing->driver_info.find("EBSVolumeID");
    if (spec.driver == "ebs" && id != existing->driver_info.end() && req.driver_volume_id.empty()) {
      req.driver_volume_id = id->second;
    }
    client.Delete(spec.name, /*reference_only=*/true);
  }
  if (spec.driver == "ebs" && req.driver_volume_id.empty()) {
    // The disk this name was attached as before: the daemon forgot it at
    // detach, but it still holds the data.
    if (auto known = volume_ids_.Get({spec.name})) req.driver_volume_id = *known;
  }
  VolumeInfo info;
  try {
    info = client.Create(req);
    *created = true;
  } catch (const ConvoyError& e) {
    // Another call attached it meanwhile (kubelet and the controller may
    // overlap): take what is there rather than fail.
    auto raced = e.answered() ? client.Inspect(spec.name) : std::nullopt;
    if (!raced || !raced->IsAttached()) {
      if (api == Api::kStock && IsAttachedElsewhere(e)) {
        throw std::runtime_error(
            std::string(e.what()) +
            "; stock Convoy v0.5.2 cannot take over an EBS volume attached to another instance "
            "(it has no detach-before-attach): detach it from that instance first (drain its "
            "node, or aws ec2 detach-volume once the instance is stopped), or run a Convoy daemon "
            "with the Kubernetes extensions (api: extended)");
      }
      throw;
    }
    info = *raced;
  }
  if (auto id = info.driver_info.find("EBSVolumeID");
      id != info.driver_info.end() && !id->second.empty()) {
    volume_ids_.Put({spec.name}, id->second);
  }
  if (info.Device().empty()) {
    throw std::runtime_error(client.Endpoint() + " attached volume " + spec.name +
                             " but reported no device");
  }
  return info;
}

DriverStatus ConvoyDriver::Attach(const Options& opts, const std::string& node) {
  return RunVerb(
      {.verb = "attach", .mode = Mode::kAttach, .opts = &opts},
      [&](const VolumeSpec& spec) { return "attach " + spec.name + " on " + node; },
      [&](const VolumeSpec& spec) {
        auto client = ClientForNode(node);
        bool created = false;
        VolumeInfo info = EnsureAttached(*client, spec, &created);
        const std::string pv = flexvolume::Get(opts, flexvolume::option::kPvOrVolumeName);
        if (!pv.empty() && pv != spec.name) names_.Put({NodeKey(node), pv}, spec.name);
        // Every node's daemon sees a VFS volume once any node created it:
        // this node's attachment is the driver's own record.
        if (spec.driver == "vfs") vfs_attachments_.Put({NodeKey(node), spec.name}, info.Device());
        DriverStatus s = Succeed();
        s.device = info.Device();
        return s;
      });
}

DriverStatus ConvoyDriver::WaitForAttach(const std::string& device, const Options& opts) {
  return RunVerb(
      {.verb = "waitforattach", .opts = &opts},
      [](const VolumeSpec& spec) { return "waitforattach " + spec.name; },
      [&](const VolumeSpec& spec) {
        const auto deadline = deps_.clock->Now() + config_.timeouts.wait_for_attach;
        std::string dev = device;
        std::unique_ptr<ConvoyClient> client;
        while (true) {
          if (dev.empty()) {
            if (!client) client = LocalClient();
            if (auto info = client->Inspect(spec.name); info && info->IsAttached())
              dev = info->Device();
          }
          if (!dev.empty()) {
            if (dev[0] != '/')
              throw std::runtime_error("device " + Quoted(dev) + " is not an absolute path");
            if (deps_.devices->Exists(dev)) break;
          }
          if (deps_.clock->Now() >= deadline) {
            throw std::runtime_error(
                (dev.empty() ? std::string("the volume is not attached to this node")
                             : "device " + dev + " did not appear") +
                " within " + std::to_string(config_.timeouts.wait_for_attach.count()) + " ms");
          }
          deps_.clock->SleepFor(kPollInterval);
        }
        DriverStatus s = Succeed();
        s.device = dev;
        return s;
      });
}

DriverStatus ConvoyDriver::IsAttached(const Options& opts, const std::string& node) {
  return RunVerb(
      {.verb = "isattached", .opts = &opts},
      [&](const VolumeSpec& spec) { return "isattached " + spec.name + " on " + node; },
      [&](const VolumeSpec& spec) {
        auto info = ClientForNode(node)->Inspect(spec.name);
        DriverStatus s = Succeed();
        s.attached = info && (spec.driver == "vfs"
                                  ? vfs_attachments_.Get({NodeKey(node), spec.name}).has_value()
                                  : info->IsAttached());
        return s;
      });
}

void ConvoyDriver::EnsureMounted(ConvoyClient& client, const VolumeSpec& spec,
                                 const std::string& dir) {
  const bool vfs = spec.driver == "vfs";
  Api api = ApiOf(client);
  if (!vfs && api == Api::kStock && spec.fs_type_requested && spec.fs_type != "ext4")
    throw std::runtime_error(StockFsRefusal(spec));
  bool mounted_by_daemon = false;
  if (auto info = client.Inspect(spec.name)) {
    // Never mount a filesystem other than the one the PV asks for.
    if (spec.fs_type_requested && !info->FsType().empty() && info->FsType() != spec.fs_type) {
      throw std::runtime_error("the volume holds " + info->FsType() +
                               ", but kubernetes.io/fsType asks for " + spec.fs_type +
                               "; it is never reformatted");
    }
    // A VFS volume's MountPoint is shared by every node: not evidence here.
    mounted_by_daemon = !vfs && !info->mount_point.empty() &&
                        Canonical(info->mount_point) == Canonical(dir) && IsMountPoint(dir);
  }
  bool mounted_now = false;
  if (vfs && api == Api::kExtended) {
    try {
      mounted_now = MountExtendedVfs(client, spec, dir);
    } catch (const ConvoyError& e) {
      if (config_.api != Api::kAuto || !IsStockVfsRefusal(e)) throw;
      RememberApi(client, Api::kStock,
                  std::string("its vfs driver refused a caller's mount point: ") + e.what());
      api = Api::kStock;
    }
  }
  if (vfs && api == Api::kStock) {
    mounted_now = MountStockVfs(client, spec, dir);
  } else if (!vfs) {
    if (!mounted_by_daemon) {
      MountRequest req;
      req.volume_name = spec.name;
      req.mount_point = dir;
      req.read_write = spec.read_only ? "ro" : "rw";
      req.fs_type = spec.fs_type_requested ? spec.fs_type : "";
      req.extensions = api != Api::kStock;
      client.Mount(req);
      mounted_now = true;
    }
    // Stock Convoy ignores ReadWrite: the driver makes the mount read-only.
    if (api == Api::kStock && spec.read_only && IsMountPoint(dir)) RemountReadOnly(dir);
  }
  const std::string difference = MountDifference(client, spec, dir);
  if (difference.empty()) return;
  if (mounted_now && IsMountPoint(dir)) {
    // Leave no mount that is not what was asked (a writable one above all).
    try {
      UnmountAt(client, dir);
    } catch (const std::exception& e) {
      flexvolume::LogWarn("mount " + spec.name + " at " + dir +
                          ": undoing the wrong mount: " + e.what());
    }
  }
  throw std::runtime_error(difference);
}

bool ConvoyDriver::OwnVfsMountAt(const std::string& dir, const std::string& name) {
  if (!IsMountPoint(dir)) return false;
  auto owner = BindMountAt(dir);
  if (owner != name) {
    throw std::runtime_error("something else is mounted there" +
                             (owner ? " (vfs volume " + *owner + ")" : std::string()));
  }
  return true;
}

bool ConvoyDriver::MountExtendedVfs(ConvoyClient& client, const VolumeSpec& spec,
                                    const std::string& dir) {
  if (OwnVfsMountAt(dir, spec.name)) return false;
  const std::string path = Canonical(dir);
  MountRequest req;
  req.volume_name = spec.name;
  req.mount_point = dir;
  req.read_write = spec.read_only ? "ro" : "rw";
  // A VFS volume is a directory: bind it, and allow a new mount point when
  // the shared metadata still names another node's (failover, PR #161).
  req.bind_mount = "bind";
  req.remount = true;
  // Recorded first: a mount made by a request that then timed out is still
  // this node's to tear down.
  bind_mounts_.Put({KeyOf(path)}, spec.name + "\n" + path);
  try {
    client.Mount(req);
  } catch (...) {
    if (!IsMountPoint(dir)) bind_mounts_.Erase({KeyOf(path)});
    throw;
  }
  return true;
}

bool ConvoyDriver::MountStockVfs(ConvoyClient& client, const VolumeSpec& spec,
                                 const std::string& dir) {
  const std::string path = Canonical(dir);
  if (OwnVfsMountAt(dir, spec.name)) {
    if (spec.read_only && !MountAt(dir)->read_only) RemountReadOnly(dir);
    return false;
  }
  // v0.5.2: no mount point; the daemon records and returns the volume's own
  // directory.
  MountRequest req;
  req.volume_name = spec.name;
  req.extensions = false;
  std::string source = client.Mount(req);
  while (!source.empty() && (source.back() == '\n' || source.back() == ' ')) source.pop_back();
  if (source.empty() || source[0] != '/') {
    throw std::runtime_error(client.Endpoint() + " mounted vfs volume " + spec.name +
                             " but answered " + Quoted(source) + " instead of its directory");
  }
  bind_mounts_.Put({KeyOf(path)}, spec.name + "\n" + path);
  try {
    MountOrThrow(source, dir, MS_BIND, "bind-mount of the volume's directory");
  } catch (const std::exception&) {
    bind_mounts_.Erase({KeyOf(path)});
    try {
      client.Umount(spec.name);
    } catch (const std::exception& e) {
      flexvolume::LogWarn("mount " + spec.name + ": umount after a failed bind mount: " + e.what());
    }
    throw;
  }
  if (spec.read_only) RemountReadOnly(dir);
  return true;
}

void ConvoyDriver::RemountReadOnly(const std::string& dir) {
  // Per mount (MS_BIND): read-only here whatever else shares the filesystem.
  MountOrThrow("", dir, MS_REMOUNT | MS_BIND | MS_RDONLY, "remount read-only");
}

std::string ConvoyDriver::MountDifference(ConvoyClient& client, const VolumeSpec& spec,
                                          const std::string& dir) {
  const auto found = MountAt(dir);
  if (!found) {
    return client.Endpoint() + " reported volume " + spec.name + " mounted at " + dir +
           ", but nothing is mounted there";
  }
  std::string difference;
  if (spec.read_only && !found->read_only) {
    difference = "it is mounted read-write (" + found->options +
                 "), but kubernetes.io/readwrite asks for ro";
  }
  // A vfs bind mount shows the filesystem under the vfs path: not the volume's.
  if (spec.driver != "vfs" && spec.fs_type_requested && found->fstype != spec.fs_type) {
    if (!difference.empty()) difference += "; ";
    difference += "it is mounted as " + found->fstype + ", but kubernetes.io/fsType asks for " +
                  spec.fs_type + "; it is never reformatted";
  }
  return difference.empty() ? "" : "volume " + spec.name + " at " + dir + ": " + difference;
}

DriverStatus ConvoyDriver::MountDevice(const std::string& dir, const std::string& device,
                                       const Options& opts) {
  return RunVerb(
      {.verb = "mountdevice",
       .mode = Mode::kAttach,
       .opts = &opts,
       .path = &dir,
       .path_rule = "the mount path must be absolute"},
      [&](const VolumeSpec& spec) { return "mountdevice " + spec.name + " at " + dir; },
      [&](const VolumeSpec& spec) {
        auto client = LocalClient();
        auto info = client->Inspect(spec.name);
        if (!info || !info->IsAttached()) {
          throw std::runtime_error("the volume is not attached to this node (" +
                                   client->Endpoint() + ")");
        }
        if (!device.empty() && info->Device() != device) {
          throw std::runtime_error("kubelet passed device " + Quoted(device) +
                                   " but the volume is attached as " + info->Device());
        }
        EnsureMounted(*client, spec, dir);
        return Succeed();
      });
}

std::vector<ConvoyDriver::Unmounted> ConvoyDriver::UnmountAt(ConvoyClient& client,
                                                             const std::string& dir) {
  const std::string target = Canonical(dir);
  if (auto own = BindMountAt(dir)) {
    // This node's mount of a VFS volume (bound by the daemon or by the
    // driver): the driver unmounts it itself and never asks the daemon,
    // whose shared MountPoint may name another node's mount by now (its
    // umount would act on that one, or clear that node's mark).
    if (IsMountPoint(dir)) UnmountOrThrow(dir);
    if (IsMountPoint(dir))
      throw std::runtime_error("still mounted after unmounting vfs volume " + *own);
    bind_mounts_.Erase({KeyOf(target)});
    return {{*own, true}};
  }
  std::vector<Unmounted> unmounted;
  for (const auto& [name, info] : client.List()) {
    // A VFS volume's MountPoint is shared by every node (and kubelet's path
    // is the same on each): it never shows that the mount here is that
    // volume, and its umount would act on another node's mark.
    if (info.driver == "vfs") continue;
    if (info.mount_point.empty() || Canonical(info.mount_point) != target) continue;
    client.Umount(name);
    unmounted.push_back({name, false});
  }
  if (IsMountPoint(dir)) {
    throw std::runtime_error(unmounted.empty()
                                 ? "something is mounted there, but no volume of " +
                                       client.Endpoint() + " is"
                                 : "still mounted after " + client.Endpoint() + " unmounted it");
  }
  return unmounted;
}

DriverStatus ConvoyDriver::UnmountDevice(const std::string& dir) {
  return RunVerb(
      {.verb = "unmountdevice",
       .mode = Mode::kAttach,
       .path = &dir,
       .path_rule = "the mount path must be absolute"},
      [&](const VolumeSpec&) { return "unmountdevice " + dir; },
      [&](const VolumeSpec&) {
        auto client = LocalClient();
        UnmountAt(*client, dir);
        return Succeed();
      });
}

DriverStatus ConvoyDriver::Detach(const std::string& volume_name, const std::string& node) {
  // The Convoy name kubelet's PV name was attached as (kubelet passes only
  // the PV name); looked up once the verb's checks have passed.
  std::string name;
  return RunVerb(
      {.verb = "detach", .mode = Mode::kAttach},
      [&](const VolumeSpec&) {
        name = names_.Get({NodeKey(node), volume_name}).value_or(volume_name);
        return "detach " + name + " on " + node;
      },
      [&](const VolumeSpec&) {
        if (!IsValidVolumeName(name)) {
          // Such a volume could never have been attached by this driver.
          return Succeed("volume " + Quoted(volume_name) +
                         " is not attached: not a valid Convoy name");
        }
        // A VFS volume's Convoy reference is one record on the shared vfs
        // path that every node's daemon reads: deleting it would detach the
        // volume from every node. This node's attachment is the driver's
        // own record, and dropping it is all a detach does (no daemon asked).
        const bool vfs_here = vfs_attachments_.Get({NodeKey(node), name}).has_value();
        auto client = ClientForNode(node);
        // Only this node's daemon is asked, and it only drops its own
        // attachment: a volume that failed over elsewhere is left alone.
        std::optional<VolumeInfo> info;
        if (!vfs_here) info = client->Inspect(name);
        if (vfs_here || (info && info->driver == "vfs")) {
          vfs_attachments_.Erase({NodeKey(node), name});
          names_.Erase({NodeKey(node), volume_name});
          return Succeed("vfs volume " + name + " detached from " + node +
                         "; its shared Convoy reference stays for the other nodes");
        }
        if (info) client->Delete(name, /*reference_only=*/true);
        names_.Erase({NodeKey(node), volume_name});
        return Succeed();
      });
}

DriverStatus ConvoyDriver::Mount(const std::string& dir, const Options& opts) {
  return RunVerb(
      {.verb = "mount",
       .mode = Mode::kMountOnly,
       .opts = &opts,
       .path = &dir,
       .path_rule = "the pod volume dir must be absolute"},
      [&](const VolumeSpec& spec) { return "mount " + spec.name + " at " + dir; },
      [&](const VolumeSpec& spec) {
        auto client = LocalClient();
        bool created = false;
        EnsureAttached(*client, spec, &created);
        try {
          EnsureMounted(*client, spec, dir);
        } catch (...) {
          // Leave no attachment behind for a mount that failed.
          if (created && spec.driver != "vfs") {
            try {
              client->Delete(spec.name, /*reference_only=*/true);
            } catch (const std::exception& e) {
              flexvolume::LogWarn("mount " + spec.name +
                                  ": detach after failed mount: " + e.what());
            }
          }
          throw;
        }
        return Succeed();
      });
}

DriverStatus ConvoyDriver::Unmount(const std::string& dir) {
  return RunVerb(
      {.verb = "unmount",
       .mode = Mode::kMountOnly,
       .path = &dir,
       .path_rule = "the pod volume dir must be absolute"},
      [&](const VolumeSpec&) { return "unmount " + dir; },
      [&](const VolumeSpec&) {
        std::error_code ec;
        if (!std::filesystem::exists(dir, ec))
          return Succeed("not mounted: " + dir + " does not exist");
        auto client = LocalClient();
        for (const Unmounted& u : UnmountAt(*client, dir)) {
          if (!u.shared) client->Delete(u.name, /*reference_only=*/true);
        }
        return Succeed();
      });
}

}  // namespace convoy_flexvolume
