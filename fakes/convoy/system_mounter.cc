#include <blkid/blkid.h>
#include <libmount/libmount.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "fakes/common/files.h"
#include "fakes/convoy/mounter.h"

namespace flexkit::fakes::convoy {
namespace {

class SystemMounter : public Mounter {
 public:
  void Mount(const std::string& source, const std::string& target, const std::string& fs_type,
             const MountOptions& options) override {
    unsigned long flags = 0;
    if (options.bind) flags |= MS_BIND | (options.recursive ? MS_REC : 0);
    if (options.read_only && !options.bind) flags |= MS_RDONLY;
    const char* type = options.bind ? nullptr : fs_type.c_str();
    if (::mount(source.c_str(), target.c_str(), type, flags, nullptr) != 0) {
      throw std::runtime_error("mount " + source + " on " + target + ": " + std::strerror(errno));
    }
    if (options.bind && options.read_only &&
        ::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      int err = errno;
      ::umount2(target.c_str(), 0);
      throw std::runtime_error("remount " + target + " read-only: " + std::strerror(err));
    }
  }

  void Unmount(const std::string& target) override {
    if (::umount2(target.c_str(), 0) != 0) {
      throw std::runtime_error("umount " + target + ": " + std::strerror(errno));
    }
  }

  bool IsMountPoint(const std::string& path) override {
    std::string cleaned = CleanPath(path);
    libmnt_table* table = mnt_new_table();
    if (table == nullptr || mnt_table_parse_mtab(table, "/proc/self/mountinfo") != 0) {
      if (table) mnt_unref_table(table);
      throw std::runtime_error("parse /proc/self/mountinfo: libmount failed");
    }
    bool found = mnt_table_find_target(table, cleaned.c_str(), MNT_ITER_BACKWARD) != nullptr;
    mnt_unref_table(table);
    return found;
  }

  std::string ProbeFilesystem(const std::string& device) override {
    blkid_probe probe = blkid_new_probe_from_filename(device.c_str());
    if (probe == nullptr) {
      throw std::runtime_error("blkid probe " + device + ": cannot open: " + std::strerror(errno));
    }
    blkid_probe_enable_superblocks(probe, 1);
    blkid_probe_set_superblocks_flags(probe, BLKID_SUBLKS_TYPE);
    std::string type;
    if (blkid_do_safeprobe(probe) == 0) {
      const char* value = nullptr;
      if (blkid_probe_lookup_value(probe, "TYPE", &value, nullptr) == 0 && value) type = value;
    }
    blkid_free_probe(probe);
    return type;
  }
};

}  // namespace

std::unique_ptr<Mounter> MakeSystemMounter() { return std::make_unique<SystemMounter>(); }

}  // namespace flexkit::fakes::convoy
