#include "simulator/mount_table.h"

#include <fcntl.h>
#include <libmount.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "platform/read_file.h"

namespace flexkit::sim {

namespace {

std::string MountInfoPath(pid_t pid) { return "/proc/" + std::to_string(pid) + "/mountinfo"; }

[[noreturn]] void Unreadable(const std::string& path, const std::string& why) {
  throw std::runtime_error("read mount table " + path + ": " + why);
}

std::vector<MountEntry> Parse(FILE* file, const std::string& path) {
  std::unique_ptr<libmnt_table, void (*)(libmnt_table*)> table(mnt_new_table(), mnt_unref_table);
  if (!table || mnt_table_parse_stream(table.get(), file, path.c_str()) != 0) {
    Unreadable(path, "libmount cannot parse it");
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

// The whole file from its start, at once: the kernel formats the table
// afresh for each read.
std::string ReadAll(int fd, const std::string& path) {
  if (::lseek(fd, 0, SEEK_SET) != 0) Unreadable(path, std::strerror(errno));
  try {
    return platform::ReadToEnd(fd, path);
  } catch (const std::system_error& e) {
    Unreadable(path, e.code().message());
  }
}

std::vector<MountEntry> ParseText(std::string& text, const std::string& path) {
  if (text.empty()) return {};
  std::unique_ptr<FILE, int (*)(FILE*)> file(::fmemopen(text.data(), text.size(), "r"),
                                             std::fclose);
  if (!file) Unreadable(path, std::strerror(errno));
  return Parse(file.get(), path);
}

}  // namespace

std::vector<MountEntry> ReadMountTable(pid_t pid) {
  const std::string path = MountInfoPath(pid);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Unreadable(path, std::strerror(errno));
  std::string text;
  try {
    text = ReadAll(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return ParseText(text, path);
}

MountTable MountTableWatch::Current() {
  const std::string path = MountInfoPath(pid_);
  std::lock_guard lock(mutex_);
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) Unreadable(path, std::strerror(errno));
    table_.reset();
  }
  // Poll before reading: a change after the poll flags the file again.
  pollfd changed{fd_, POLLPRI, 0};
  if (::poll(&changed, 1, 0) < 0) Unreadable(path, std::strerror(errno));
  if (table_ && (changed.revents & POLLPRI) == 0) return table_;
  std::string text = ReadAll(fd_, path);
  table_ = std::make_shared<const std::vector<MountEntry>>(ParseText(text, path));
  return table_;
}

void MountTableWatch::Close() {
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  table_.reset();
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
