#include "simulator/mount_table.h"

#include <libmount.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace flexkit::sim {

std::vector<MountEntry> ReadMountTable(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mountinfo";
  // Read through one large buffer: the kernel formats the table afresh for
  // each read(2), and the harness reads it after nearly every step.
  std::vector<char> buffer(65536);  // outlives the FILE that uses it
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "re"), std::fclose);
  if (!file) throw std::runtime_error("read mount table " + path + ": " + std::strerror(errno));
  std::setvbuf(file.get(), buffer.data(), _IOFBF, buffer.size());
  std::unique_ptr<libmnt_table, void (*)(libmnt_table*)> table(mnt_new_table(), mnt_unref_table);
  if (!table || mnt_table_parse_stream(table.get(), file.get(), path.c_str()) != 0) {
    throw std::runtime_error("read mount table " + path + ": libmount cannot parse it");
  }
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

std::size_t MountCountAt(const std::vector<MountEntry>& table, const std::string& target) {
  return static_cast<std::size_t>(std::count_if(
      table.begin(), table.end(), [&](const MountEntry& m) { return m.target == target; }));
}

std::string TopmostOptionsAt(const std::vector<MountEntry>& table, const std::string& target) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    if (it->target == target) return it->options;
  }
  return "";
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
