#include "driver/sdk/mounter.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "driver/sdk/file_text.h"
#include "driver/sdk/mountinfo.h"

namespace flexvolume {
namespace {

std::string Canonical(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// "EBUSY (Device or resource busy)"
std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return std::string(name != nullptr ? name : "errno " + std::to_string(err)) + " (" +
         std::strerror(err) + ")";
}

}  // namespace

bool Mounter::FindMount(const std::string& path, std::optional<MountEntry>* found,
                        std::string* err) {
  std::vector<MountEntry> entries;
  if (!List(&entries, err)) return false;
  const std::string canonical = Canonical(path);
  found->reset();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->target == canonical || it->target == path) {
      *found = *it;
      break;
    }
  }
  return true;
}

bool SystemMounter::Mount(const std::string& source, const std::string& target,
                          const std::string& fstype, unsigned long flags, const std::string& data,
                          std::string* err) {
  if (::mount(source.c_str(), target.c_str(), fstype.empty() ? nullptr : fstype.c_str(), flags,
              data.empty() ? nullptr : data.c_str()) != 0) {
    *err = "mount " + source + " on " + target + " (" + (fstype.empty() ? "bind" : fstype) +
           "): " + ErrnoText(errno);
    return false;
  }
  return true;
}

bool SystemMounter::Unmount(const std::string& target, std::string* err) {
  if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) != 0) {
    *err = "unmount " + target + ": " + ErrnoText(errno);
    return false;
  }
  return true;
}

bool SystemMounter::List(std::vector<MountEntry>* out, std::string* err) {
  const auto text = ReadFileText("/proc/self/mountinfo");
  if (!text) {
    *err = "read /proc/self/mountinfo: " + ErrnoText(errno);
    return false;
  }
  if (!ParseMountInfo(*text, out, err)) {
    *err = "read /proc/self/mountinfo: " + *err;
    return false;
  }
  return true;
}

bool FakeMounter::Mount(const std::string& source, const std::string& target,
                        const std::string& fstype, unsigned long flags, const std::string& data,
                        std::string* err) {
  if (!fail_with.empty()) {
    *err = fail_with;
    return false;
  }
  const bool ro = (flags & MS_RDONLY) != 0;
  if ((flags & MS_REMOUNT) != 0) {  // changes the topmost mount at target, as mount(2) does
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
      if (it->target != target) continue;
      it->read_only = ro;
      it->options = std::string(ro ? "ro" : "rw") + (data.empty() ? "" : "," + data);
      return true;
    }
    *err = "remount " + target + ": EINVAL (not mounted)";
    return false;
  }
  mounts.push_back({source, target, fstype, ro ? "ro" : "rw", ro});
  return true;
}

bool FakeMounter::Unmount(const std::string& target, std::string* err) {
  if (!fail_with.empty()) {
    *err = fail_with;
    return false;
  }
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
    if (it->target == target) {
      mounts.erase(std::next(it).base());
      return true;
    }
  }
  *err = "unmount " + target + ": EINVAL (not mounted)";
  return false;
}

bool FakeMounter::List(std::vector<MountEntry>* out, std::string* err) {
  if (!fail_with.empty()) {
    *err = fail_with;
    return false;
  }
  *out = mounts;
  return true;
}

}  // namespace flexvolume
