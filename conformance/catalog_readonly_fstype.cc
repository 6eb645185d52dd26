// [readonly]: kubernetes.io/readwrite=ro is enforced: a write through the
// pod dir fails (F18). [fstype]: the filesystem on the device is the one
// asked for, and a device formatted differently is never reformatted (F19).
#include "conformance/catalog.h"
#include "simulator/mount_table.h"

namespace flexkit::conform {
namespace {

void ReadOnlyEnforced(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol"), /*read_only=*/true), c.Pod("pod"));
  bool wrote = false;
  try {
    n.mounter().WriteFile(v.pod_dir + "/must-not-exist", "x");
    wrote = true;
  } catch (const std::exception&) {
    // expected: EROFS
  }
  if (wrote) {
    c.Fail("F18 (protocol §4: readwrite=ro mounts read-only)",
           "a write through " + v.pod_dir +
               " succeeded (mount options: " + c.MountOptions(n, v.pod_dir) + ")");
  }
  TearDownAll(c);
}

std::string NeedsFsTypes(const DriverProfile& p, std::size_t count) {
  if (!p.attachable())
    return "capability: attach:false (the driver, not a device, decides the filesystem)";
  if (p.fs_types.size() < count)
    return "profile: fsTypes lists fewer than " + std::to_string(count) + " types";
  return "";
}

std::string FsOf(sim::Node& n, const std::string& target) {
  for (const auto& m : sim::ReadMountTable(n.holder_pid())) {
    if (m.target == target) return m.fs_type;
  }
  return "";
}

void FsTypeHonoured(CaseContext& c) {
  auto& n = c.node();
  for (const auto& fs : c.profile().fs_types) {
    auto spec = c.Volume(c.Unique("vol"));
    spec.fs_type = fs;
    auto v = c.SetUp(n, spec, c.Pod("pod"));
    const std::string got = FsOf(n, v.global_path);
    if (got != fs)
      c.Fail("F19 (protocol §4: kubernetes.io/fsType is honoured)",
             "asked for " + fs + ", device mounted as '" + got + "'");
    TearDownAll(c);
  }
}

// The device stays attached (a new attach may legitimately give a new
// blank volume): mountdevice with fsType A, data written, unmountdevice,
// then mountdevice of the same device with fsType B must not reformat.
void NeverReformat(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  spec.fs_type = c.profile().fs_types[0];
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v, "keep.txt");
  c.tracker().RunNow(v.pod_undo);
  if (c.MountCount(n, v.global_path) > 0)
    c.Require(n, c.argv().UnmountDevice(v.global_path), "protocol §7: unmountdevice succeeds");
  auto other = spec;
  other.fs_type = c.profile().fs_types[1];
  n.mounter().MakeDirs(v.global_path, 0750);
  auto md = c.Call(n, c.argv().MountDevice(v.global_path, v.device, c.Json(other)));
  const std::string fs = FsOf(n, v.global_path);
  if (md.ok() && fs == other.fs_type) {
    c.Fail("F19 (protocol §7: an existing filesystem is never reformatted)",
           "the device held " + spec.fs_type + " with data; mountdevice with fsType " +
               other.fs_type + " reformatted it");
  }
  if (md.ok())
    c.Warn("mountdevice with fsType " + other.fs_type + " on a " + fs +
           " device said Success without formatting");
  TearDownAll(c);
}

}  // namespace

void AddReadOnlyCases(std::vector<Case>& cases) {
  cases.push_back(
      {"readonly/write-fails", {"readonly", "root"}, {"F18"}, Always, ReadOnlyEnforced});
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
}

}  // namespace flexkit::conform
