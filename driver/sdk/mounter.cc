#include "driver/sdk/mounter.h"

#include <dlfcn.h>
#include <libmount.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

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

// libmount, loaded on first use: a driver binary that links it pays for
// loading it and its dependencies (libblkid, libselinux, pcre2) on every
// exec, including `init`, which kubelet runs often and must be fast.
struct LibMount {
  decltype(&mnt_new_table_from_file) new_table_from_file = nullptr;
  decltype(&mnt_unref_table) unref_table = nullptr;
  decltype(&mnt_new_iter) new_iter = nullptr;
  decltype(&mnt_free_iter) free_iter = nullptr;
  decltype(&mnt_table_next_fs) table_next_fs = nullptr;
  decltype(&mnt_fs_get_source) fs_get_source = nullptr;
  decltype(&mnt_fs_get_target) fs_get_target = nullptr;
  decltype(&mnt_fs_get_fstype) fs_get_fstype = nullptr;
  decltype(&mnt_fs_get_vfs_options) fs_get_vfs_options = nullptr;
  decltype(&mnt_optstr_get_option) optstr_get_option = nullptr;
  std::string error;  // why loading failed; empty when loaded
};

const LibMount& LoadLibMount() {
  static LibMount lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = dlopen("libmount.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      lib.error =
          std::string("cannot load libmount.so.1: ") + (why != nullptr ? why : "unknown error");
      return;
    }
    bool ok = true;
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
      if (fn == nullptr) ok = false;
    };
    load(lib.new_table_from_file, "mnt_new_table_from_file");
    load(lib.unref_table, "mnt_unref_table");
    load(lib.new_iter, "mnt_new_iter");
    load(lib.free_iter, "mnt_free_iter");
    load(lib.table_next_fs, "mnt_table_next_fs");
    load(lib.fs_get_source, "mnt_fs_get_source");
    load(lib.fs_get_target, "mnt_fs_get_target");
    load(lib.fs_get_fstype, "mnt_fs_get_fstype");
    load(lib.fs_get_vfs_options, "mnt_fs_get_vfs_options");
    load(lib.optstr_get_option, "mnt_optstr_get_option");
    if (!ok) lib.error = "libmount.so.1 lacks a function flexvolume needs";
  });
  return lib;
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
  const LibMount& lib = LoadLibMount();
  if (!lib.error.empty()) {
    *err = "read /proc/self/mountinfo: " + lib.error;
    return false;
  }
  std::unique_ptr<libmnt_table, decltype(lib.unref_table)> table(
      lib.new_table_from_file("/proc/self/mountinfo"), lib.unref_table);
  if (!table) {
    *err = "read /proc/self/mountinfo: libmount cannot parse it";
    return false;
  }
  std::unique_ptr<libmnt_iter, decltype(lib.free_iter)> iter(lib.new_iter(MNT_ITER_FORWARD),
                                                             lib.free_iter);
  out->clear();
  libmnt_fs* fs = nullptr;
  while (lib.table_next_fs(table.get(), iter.get(), &fs) == 0) {
    MountEntry e;
    auto str = [](const char* s) { return s != nullptr ? std::string(s) : std::string(); };
    e.source = str(lib.fs_get_source(fs));
    e.target = str(lib.fs_get_target(fs));
    e.fstype = str(lib.fs_get_fstype(fs));
    const char* vfs_options = lib.fs_get_vfs_options(fs);
    e.options = str(vfs_options);
    e.read_only =
        vfs_options != nullptr && lib.optstr_get_option(vfs_options, "ro", nullptr, nullptr) == 0;
    out->push_back(std::move(e));
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
