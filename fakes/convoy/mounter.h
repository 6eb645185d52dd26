#pragma once
// Host mounts behind a small interface (after Kubernetes' mount.Interface):
// the daemon mounts, bind-mounts and remounts read-only for real through
// SystemMounter, in the mount namespace it runs in; tests may substitute.
#include <memory>
#include <string>

namespace flexkit::fakes::convoy {

struct MountOptions {
  bool bind = false;
  bool recursive = false;  // rbind
  bool read_only = false;
};

class Mounter {
 public:
  virtual ~Mounter() = default;
  // mount(2) of `source` on `target`; a read-only bind is a bind followed by
  // a read-only remount, as the kernel requires. Throws with what/where/why.
  virtual void Mount(const std::string& source, const std::string& target,
                     const std::string& fs_type, const MountOptions& options) = 0;
  virtual void Unmount(const std::string& target) = 0;
  // True when `path` is a mount point in /proc/self/mountinfo (libmount).
  virtual bool IsMountPoint(const std::string& path) = 0;
  // The filesystem type blkid finds on `device`, "" when it finds none.
  virtual std::string ProbeFilesystem(const std::string& device) = 0;
};

std::unique_ptr<Mounter> MakeSystemMounter();

}  // namespace flexkit::fakes::convoy
