#pragma once
// What kubelet itself does to a node's filesystem (mount.Interface in
// Kubernetes): mounts for the Not-supported fallbacks, mount-point checks,
// directories. One real implementation per node namespace, one fake.
#include <string>

namespace flexkit::sim {

class Mounter {
 public:
  virtual ~Mounter() = default;
  // mount(2) semantics; errors throw std::runtime_error("mount SRC on DST: why").
  virtual void Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, unsigned long flags, const std::string& data) = 0;
  virtual void Unmount(const std::string& target) = 0;
  // IsLikelyNotMountPoint == false: `path` is the target of a mount.
  virtual bool IsMountPoint(const std::string& path) = 0;
  virtual bool PathExists(const std::string& path) = 0;
  virtual void MakeDirs(const std::string& path, unsigned mode) = 0;  // mkdir -p
  virtual void RemoveDir(const std::string& path) = 0;                // rmdir, not recursive
  // SafeFormatAndMount: mkfs (fsType, "" = ext4) only when the device has
  // no filesystem, then mount, read-only if asked.
  virtual void FormatAndMount(const std::string& device, const std::string& target,
                              const std::string& fs_type, bool read_only) = 0;
  // volume.SetVolumeOwnership: group `gid` on every entry, group rw, setgid dirs.
  virtual void SetVolumeOwnership(const std::string& dir, long gid) = 0;
  virtual long GroupOf(const std::string& path) = 0;  // the owning group id
  virtual void WriteFile(const std::string& path, const std::string& content) = 0;
  virtual std::string ReadFile(const std::string& path) = 0;
};

}  // namespace flexkit::sim
