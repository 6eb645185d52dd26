#include "driver/samples/tmpfs/tmpfs_driver.h"

#include <sys/mount.h>

#include <filesystem>
#include <system_error>

namespace flexkit::tmpfs {
namespace {

using flexvolume::DriverStatus;
using flexvolume::Fail;
using flexvolume::Succeed;

// Each unmount removes one stacked mount; more than this many of ours on one
// directory means something else keeps mounting there.
constexpr int kMaxStackedMounts = 16;

bool ValidSize(const std::string& size) {
  if (size.empty()) return false;
  size_t digits = 0;
  while (digits < size.size() && size[digits] >= '0' && size[digits] <= '9') ++digits;
  if (digits == 0) return false;
  const std::string suffix = size.substr(digits);
  return suffix.empty() || suffix == "k" || suffix == "m" || suffix == "g" || suffix == "K" ||
         suffix == "M" || suffix == "G";
}

}  // namespace

DriverStatus TmpfsDriver::Init() {
  DriverStatus s = Succeed();
  flexvolume::Capabilities caps;
  caps.attach = false;
  caps.supports_metrics = true;
  caps.requires_fs_resize = true;  // expandfs grows the tmpfs
  s.capabilities = caps;
  return s;
}

DriverStatus TmpfsDriver::Mount(const std::string& dir, const flexvolume::Options& opts) {
  if (dir.empty() || dir[0] != '/')
    return Fail("mount: the pod volume dir must be an absolute path");
  std::string err;
  std::optional<flexvolume::MountEntry> existing;
  if (!mounter_.FindMount(dir, &existing, &err)) return Fail("mount " + dir + ": " + err);
  if (existing) {
    if (existing->source == kMountSource) return Succeed("already mounted");
    return Fail("mount " + dir + ": " + existing->fstype + " from " + existing->source +
                " is already mounted there");
  }

  std::string data = "mode=0755";
  const std::string size = flexvolume::Get(opts, "size");
  if (!size.empty()) {
    // Validated so a value like "1m,uid=0" cannot smuggle in mount options.
    if (!ValidSize(size))
      return Fail("mount: option size must be digits with an optional k, m or g suffix");
    data += ",size=" + size;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail("mount: create " + dir + ": " + ec.message());

  unsigned long flags = MS_NOSUID | MS_NODEV;
  if (flexvolume::IsReadOnly(opts)) flags |= MS_RDONLY;
  if (!mounter_.Mount(kMountSource, dir, "tmpfs", flags, data, &err)) return Fail(err);
  return Succeed();
}

DriverStatus TmpfsDriver::Unmount(const std::string& dir) {
  if (dir.empty() || dir[0] != '/')
    return Fail("unmount: the pod volume dir must be an absolute path");
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return Succeed("not mounted: " + dir + " does not exist");
  for (int i = 0; i < kMaxStackedMounts; ++i) {
    std::string err;
    std::optional<flexvolume::MountEntry> existing;
    if (!mounter_.FindMount(dir, &existing, &err)) return Fail("unmount " + dir + ": " + err);
    if (!existing) return Succeed();
    if (existing->source != kMountSource) {
      return Fail("unmount " + dir + ": " + existing->fstype + " from " + existing->source +
                  " is mounted there, not a flexkit-tmpfs volume");
    }
    if (!mounter_.Unmount(dir, &err)) return Fail(err);
  }
  return Fail("unmount " + dir + ": still mounted after " + std::to_string(kMaxStackedMounts) +
              " unmounts");
}

DriverStatus TmpfsDriver::ExpandFs(const flexvolume::Options&, const std::string&,
                                   const std::string& pod_volume_dir, uint64_t new_size, uint64_t) {
  if (pod_volume_dir.empty() || pod_volume_dir[0] != '/')
    return Fail("expandfs: the pod volume dir must be an absolute path");
  if (new_size == 0) return Fail("expandfs: the new size must be a positive number of bytes");
  std::string err;
  std::optional<flexvolume::MountEntry> existing;
  if (!mounter_.FindMount(pod_volume_dir, &existing, &err))
    return Fail("expandfs " + pod_volume_dir + ": " + err);
  if (!existing || existing->source != kMountSource)
    return Fail("expandfs " + pod_volume_dir + ": no flexkit-tmpfs volume is mounted there");
  unsigned long flags = MS_REMOUNT | MS_NOSUID | MS_NODEV;
  if (existing->read_only) flags |= MS_RDONLY;
  if (!mounter_.Mount(kMountSource, pod_volume_dir, "tmpfs", flags,
                      "size=" + std::to_string(new_size), &err))
    return Fail("expandfs " + pod_volume_dir + " to " + std::to_string(new_size) +
                " bytes: " + err);
  return Succeed();
}

}  // namespace flexkit::tmpfs
