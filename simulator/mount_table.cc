#include "simulator/mount_table.h"

#include <libmount.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace flexkit::sim {

std::vector<MountEntry> ReadMountTable(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mountinfo";
  std::unique_ptr<libmnt_table, void (*)(libmnt_table*)> table(
      mnt_new_table_from_file(path.c_str()), mnt_unref_table);
  if (!table) throw std::runtime_error("read mount table " + path + ": libmount cannot parse it");
  std::unique_ptr<libmnt_iter, void (*)(libmnt_iter*)> iter(mnt_new_iter(MNT_ITER_FORWARD),
                                                            mnt_free_iter);
  std::vector<MountEntry> entries;
  libmnt_fs* fs = nullptr;
  auto str = [](const char* s) { return s == nullptr ? std::string() : std::string(s); };
  while (mnt_table_next_fs(table.get(), iter.get(), &fs) == 0) {
    entries.push_back({str(mnt_fs_get_target(fs)), str(mnt_fs_get_source(fs)),
                       str(mnt_fs_get_fstype(fs)), str(mnt_fs_get_vfs_options(fs)),
                       mnt_fs_get_root(fs) ? str(mnt_fs_get_root(fs)) : "/"});
  }
  return entries;
}

std::vector<MountEntry> MountsAdded(const std::vector<MountEntry>& before,
                                    const std::vector<MountEntry>& after) {
  std::vector<MountEntry> added;
  std::vector<MountEntry> pool = before;
  for (const auto& m : after) {
    auto it = std::find_if(pool.begin(), pool.end(), [&](const MountEntry& b) {
      return b.target == m.target && b.source == m.source && b.fs_type == m.fs_type;
    });
    if (it == pool.end()) {
      added.push_back(m);
    } else {
      pool.erase(it);
    }
  }
  return added;
}

}  // namespace flexkit::sim
