#pragma once
// What kubelet itself does to a node's filesystem (mount.Interface and the
// os calls of Kubernetes' volume code): mounts for the Not-supported
// fallbacks, mount-point checks, directories, ownership, and the files a
// scenario writes and checks in a pod's volume. One real implementation
// per node namespace (NamespaceFilesystem, node.h), one in memory
// (FakeNodeFilesystem) for tests that run without root.
#include <stdexcept>
#include <string>
#include <vector>

#include "simulator/mount_table.h"

namespace flexkit::sim {

// Every NodeFilesystem error: the message says what was attempted on what,
// and `code` is the errno, so that callers can tell a transient EBUSY from
// the rest (EIO when the cause is not a system call).
class FilesystemError : public std::runtime_error {
 public:
  FilesystemError(const std::string& message, int code)
      : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

class NodeFilesystem {
 public:
  virtual ~NodeFilesystem() = default;
  // mount(2) semantics (MS_BIND, MS_REMOUNT, MS_RDONLY in `flags`).
  virtual void Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, unsigned long flags, const std::string& data) = 0;
  virtual void Unmount(const std::string& target) = 0;
  // IsLikelyNotMountPoint == false: `path` is the target of a mount.
  virtual bool IsMountPoint(const std::string& path) = 0;
  // The node's mount table now (empty while the node is down).
  virtual std::vector<MountEntry> Mounts() = 0;
  virtual bool PathExists(const std::string& path) = 0;
  virtual void MakeDirs(const std::string& path, unsigned mode) = 0;  // mkdir -p
  // os.Remove, as kubelet's CleanupMountPoint: an empty directory (rmdir,
  // not recursive) or a file (kubelet reconstructs every name in a
  // plugin's volumes dir, files too, and removes each after unmount).
  virtual void RemoveDir(const std::string& path) = 0;
  // The names in a directory (no "." or ".."); empty when it is missing.
  virtual std::vector<std::string> ListDir(const std::string& path) = 0;
  // SafeFormatAndMount: mkfs (fsType, "" = ext4) only when the device has
  // no filesystem, then mount, read-only if asked.
  virtual void FormatAndMount(const std::string& device, const std::string& target,
                              const std::string& fs_type, bool read_only) = 0;
  // resizefs.ResizeFs (kubelet's generic resize after expandfs answers Not
  // supported): grows the filesystem on `device` (its type as blkid
  // reads it) to the device's size: resize2fs on the device for ext*,
  // xfs_growfs on `mount_path` for xfs; any other type is an error.
  virtual void ResizeFs(const std::string& device, const std::string& mount_path) = 0;
  // volume.SetVolumeOwnership: group `gid` on every entry, group rw, setgid dirs.
  virtual void SetVolumeOwnership(const std::string& dir, long gid) = 0;
  virtual long GroupOf(const std::string& path) = 0;  // the owning group id
  virtual void WriteFile(const std::string& path, const std::string& content) = 0;
  virtual std::string ReadFile(const std::string& path) = 0;
};

}  // namespace flexkit::sim
