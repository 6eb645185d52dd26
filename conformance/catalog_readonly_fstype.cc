// [readonly]: kubernetes.io/readwrite=ro is enforced: a write through the
// pod dir fails, and attachable drivers mount the device read-only at the
// global path (F18). [fstype], for every driver that formats (attachable:
// at mountdevice; mount-only drivers get kubernetes.io/fsType in mount
// too): the filesystem made is the one asked for, kubelet's default ""
// works, and a volume formatted differently is never reformatted (F19).
#include <filesystem>
#include <optional>
#include <set>

#include "conformance/catalog.h"
#include "simulator/mount_table.h"

namespace flexkit::conform {
namespace {

void ReadOnlyEnforced(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol"), /*read_only=*/true), c.Pod("pod"));
  if (WriteGoesThrough(c, n, v.pod_dir)) {
    c.Fail("F18 read-only: readwrite=ro mounts read-only",
           "a write through " + v.pod_dir +
               " succeeded (mount options: " + c.MountOptions(n, v.pod_dir) + ")");
  }
  TearDownAll(c);
}

// Attachable drivers: readwrite=ro must make the device's mount at the
// global path read-only. The pod dir cannot show it: kubelet's bind mount
// of the global path is read-only by itself, hiding a device mounted rw.
void GlobalPathReadOnly(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol"), /*read_only=*/true), c.Pod("pod"));
  const std::string options = c.MountOptions(n, v.global_path);
  bool ro = false;
  for (std::size_t at = 0; at <= options.size();) {
    std::size_t comma = options.find(',', at);
    if (comma == std::string::npos) comma = options.size();
    ro |= options.substr(at, comma - at) == "ro";
    at = comma + 1;
  }
  const bool wrote = WriteGoesThrough(c, n, v.global_path);
  if (!ro || wrote) {
    c.Fail("F18 read-only: readwrite=ro mounts the device read-only at the global path",
           "the device is mounted at " + v.global_path + " with options '" + options + "'" +
               (wrote ? " and a write there succeeded" : ""));
  }
  TearDownAll(c);
}

bool MkfsInstalled(const std::string& fs) {
  std::error_code ec;
  return std::filesystem::exists("/sbin/mkfs." + fs, ec) ||
         std::filesystem::exists("/usr/sbin/mkfs." + fs, ec);
}

// The profile's fsTypes; without any, ext4 and (when mkfs.xfs is
// installed) xfs, each of which the driver may refuse.
std::vector<std::string> FsTypesToTry(const DriverProfile& p) {
  if (!p.fs_types.empty()) return p.fs_types;
  std::vector<std::string> types = {"ext4"};
  if (MkfsInstalled("xfs")) types.push_back("xfs");
  return types;
}

std::string NeedsFsTypes(const DriverProfile& p, std::size_t count) {
  if (FsTypesToTry(p).size() < count)
    return "profile: fsTypes lists fewer than " + std::to_string(count) + " types";
  return "";
}

// Filesystems a driver makes on a device (not tmpfs, nfs, cifs, fuse, ...).
bool IsFormatted(const std::string& fs) {
  static const std::set<std::string> disk = {"ext2",  "ext3", "ext4",  "xfs",  "btrfs", "vfat",
                                             "exfat", "ntfs", "ntfs3", "f2fs", "jfs",   "reiserfs"};
  return disk.count(fs) > 0;
}

std::string FsOf(sim::Node& n, const std::string& target) {
  const auto table = n.Mounts();
  for (const auto& m : *table) {
    if (m.target == target) return m.fs_type;
  }
  return "";
}

// A bind mount of a directory (mountinfo's root is not "/") shows the
// type of the filesystem that directory lives on, which the driver did
// not make: a hostPath- or NFS-like driver on an ext4 node.
bool IsBindOfADirectory(sim::Node& n, const std::string& target) {
  bool bind = false;
  const auto table = n.Mounts();
  for (const auto& m : *table)
    if (m.target == target) bind = m.root != "/";  // the topmost mount wins
  return bind;
}

// Where the filesystem of a volume is decided: the global path for
// attachable drivers (mountdevice), the pod dir for the others (mount
// gets kubernetes.io/fsType too, and may format an image).
std::string FsTarget(const DriverProfile& p, const PodVolume& v) {
  return p.attachable() ? v.global_path : v.pod_dir;
}

void SkipUnlessFormatted(CaseContext& c, const std::string& fs, const std::string& target) {
  if (IsBindOfADirectory(c.node(), target)) {
    c.Skip("capability: the driver does not format: " + target +
           " is a bind mount of a directory, whatever kubernetes.io/fsType says");
  }
  if (!IsFormatted(fs)) {
    c.Skip("capability: the driver does not format: " + target + " is " +
           (fs.empty() ? "no mount" : fs) + ", whatever kubernetes.io/fsType says");
  }
}

void FsTypeHonoured(CaseContext& c) {
  auto& n = c.node();
  const bool listed = !c.profile().fs_types.empty();
  bool first = true;
  for (const auto& fs : FsTypesToTry(c.profile())) {
    auto spec = c.Volume(c.Unique("vol"));
    spec.fs_type = fs;
    std::optional<PodVolume> v;
    if (listed) {
      v = c.SetUp(n, spec, c.Pod("pod"));
    } else if (!(v = SetUpOrRefused(c, n, spec, c.Pod("pod"), "fsType " + fs))) {
      c.Warn("the driver refused fsType " + fs + " (the profile lists no fsTypes)");
      TearDownAll(c);
      continue;
    }
    const std::string target = FsTarget(c.profile(), *v);
    const std::string got = FsOf(n, target);
    if (first) SkipUnlessFormatted(c, got, target);
    first = false;
    if (got != fs)
      c.Fail("F19 fstype-honoured: kubernetes.io/fsType is honoured",
             "asked for " + fs + ", " + target + " is mounted as '" + got + "'");
    CheckDataRoundTrip(c, *v);
    TearDownAll(c);
  }
}

// kubelet sends fsType "" unless the PV sets one: the driver's default
// must work even when the profile lists fsTypes (every other case sends
// the first of them).
void EmptyFsTypeDefault(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  spec.fs_type = "";
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  const std::string target = FsTarget(c.profile(), v);
  c.transcript().AddEvent("fsType \"\" made " + FsOf(n, target), {{"target", target}});
  TearDownAll(c);
}

// Data on a filesystem of type A, then the same volume set up with type
// B: the driver must keep the data (mount the existing filesystem, or
// refuse), never reformat. Attachable: the device stays attached (a new
// attach may legitimately give a new blank volume) while mountdevice runs
// again; mount-only: mount again under a new pod.
void NeverReformat(CaseContext& c) {
  auto& n = c.node();
  const auto types = FsTypesToTry(c.profile());
  auto spec = c.Volume(c.Unique("vol"));
  spec.fs_type = types[0];
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  SkipUnlessFormatted(c, FsOf(n, FsTarget(c.profile(), v)), FsTarget(c.profile(), v));
  CheckDataRoundTrip(c, v, "keep.txt");
  c.tracker().RunNow(v.pod_undo);
  auto other = spec;
  other.fs_type = types[1];
  sim::CallResult again;
  std::string target;
  if (c.profile().attachable()) {
    if (c.MountCount(n, v.global_path) > 0)
      c.Require(c.ops().CallUnmountDevice(n, spec.driver, v.global_path), "unmountdevice",
                "F10 unmountdevice-succeeds: unmountdevice succeeds");
    n.filesystem().MakeDirs(v.global_path, 0750);
    target = v.global_path;
    again = c.ops().CallMountDevice(n, other, v.global_path, v.device);
  } else {
    auto pod = c.Pod("pod");
    target = c.Paths(n).PodVolumeDir(pod.pod_uid, other.name);
    n.filesystem().MakeDirs(target, 0750);
    again = c.ops().CallMount(n, other, pod, target);
    if (again.ok()) {
      c.TrackPodTeardown(n, target);
    }
  }
  if (again.ok()) {
    const std::string fs = FsOf(n, target);
    std::string kept;
    try {
      kept = n.filesystem().ReadFile(target + "/keep.txt");
    } catch (const std::exception&) {
    }
    if (fs == other.fs_type && kept.empty()) {
      c.Fail("F19 never-reformat: an existing filesystem is never reformatted",
             "the volume held " + spec.fs_type + " with data; " + (again.ok() ? "" : "") +
                 "setting it up with fsType " + other.fs_type + " reformatted it");
    }
    if (fs != other.fs_type)
      c.Warn("set up with fsType " + other.fs_type + " on a " + fs +
             " volume, the driver said Success without formatting");
  }
  TearDownAll(c);
}

}  // namespace

void AddReadOnlyCases(std::vector<Case>& cases) {
  cases.push_back(
      {"readonly/write-fails", {"readonly", "root"}, {"F18"}, Always, ReadOnlyEnforced});
  cases.push_back({"readonly/global-path-read-only",
                   {"readonly", "root"},
                   {"F18"},
                   AttachableOnly,
                   GlobalPathReadOnly});
}

void AddFsTypeCases(std::vector<Case>& cases) {
  cases.push_back({"fstype/honoured",
                   {"fstype", "root"},
                   {"F19"},
                   [](const DriverProfile& p) { return NeedsFsTypes(p, 1); },
                   FsTypeHonoured});
  cases.push_back({"fstype/never-reformat",
                   {"fstype", "root"},
                   {"F19"},
                   [](const DriverProfile& p) { return NeedsFsTypes(p, 2); },
                   NeverReformat});
  cases.push_back({"fstype/empty-is-kubelet-default",
                   {"fstype", "root"},
                   {"F19"},
                   [](const DriverProfile& p) {
                     return p.fs_types.empty() ? "profile: lists no fsTypes, so every case sends "
                                                 "kubelet's default \"\""
                                               : "";
                   },
                   EmptyFsTypeDefault});
}

}  // namespace flexkit::conform
