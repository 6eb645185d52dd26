#pragma once
// Mounts behind a small interface (after Kubernetes' mount.Interface), so
// drivers can be tested without privileges: SystemMounter does mount(2) and
// parses /proc/self/mountinfo (mountinfo.h); FakeMounter keeps a table.
#include <optional>
#include <string>
#include <vector>

namespace flexvolume {

struct MountEntry {
  std::string source;
  std::string target;
  std::string fstype;
  std::string options;  // per-mount (VFS) options, e.g. "ro,nosuid"
  bool read_only = false;
};

class Mounter {
 public:
  virtual ~Mounter() = default;

  // mount(2). On failure returns false and *err says what failed and why.
  virtual bool Mount(const std::string& source, const std::string& target,
                     const std::string& fstype, unsigned long flags, const std::string& data,
                     std::string* err) = 0;

  // umount2(2) of the topmost mount at `target`, not following symlinks.
  virtual bool Unmount(const std::string& target, std::string* err) = 0;

  // The mount table of this mount namespace, in mount order.
  virtual bool List(std::vector<MountEntry>* out, std::string* err) = 0;

  // The topmost mount whose target is exactly `path` (compared after
  // resolving symlinks when `path` exists) into *found, nullopt when nothing
  // is mounted there. On a read error returns false with *err set.
  bool FindMount(const std::string& path, std::optional<MountEntry>* found, std::string* err);
};

class SystemMounter final : public Mounter {
 public:
  bool Mount(const std::string& source, const std::string& target, const std::string& fstype,
             unsigned long flags, const std::string& data, std::string* err) override;
  bool Unmount(const std::string& target, std::string* err) override;
  bool List(std::vector<MountEntry>* out, std::string* err) override;
};

class FakeMounter final : public Mounter {
 public:
  bool Mount(const std::string& source, const std::string& target, const std::string& fstype,
             unsigned long flags, const std::string& data, std::string* err) override;
  bool Unmount(const std::string& target, std::string* err) override;
  bool List(std::vector<MountEntry>* out, std::string* err) override;

  std::vector<MountEntry> mounts;
  // Set to make the next operations fail with this message.
  std::string fail_with;
};

}  // namespace flexvolume
