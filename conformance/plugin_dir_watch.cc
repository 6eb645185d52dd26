#include "conformance/plugin_dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace flexkit::conform {
namespace {

// fsnotify's mask: Create, Write, Remove, Rename and Chmod.
constexpr std::uint32_t kProberMask = IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_DELETE |
                                      IN_DELETE_SELF | IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF;

std::string EventName(std::uint32_t mask) {
  if (mask & (IN_CREATE | IN_MOVED_TO)) return "created";
  if (mask & IN_MODIFY) return "written";
  if (mask & IN_ATTRIB) return "chmod";
  if (mask & (IN_DELETE | IN_DELETE_SELF)) return "removed";
  return "renamed";
}

}  // namespace

PluginDirWatch::PluginDirWatch(const std::string& folder, const std::string& unwatched) {
  std::error_code ec;
  if (!unwatched.empty()) unwatched_ = std::filesystem::weakly_canonical(unwatched, ec).string();
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    error_ = std::string("inotify_init1: ") + std::strerror(errno);
    return;
  }
  std::string dir = std::filesystem::path(folder).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  AddRecursive(dir);
}

PluginDirWatch::~PluginDirWatch() {
  if (fd_ >= 0) ::close(fd_);
}

void PluginDirWatch::AddRecursive(const std::string& dir) {
  std::error_code canon_ec;
  if (!unwatched_.empty() &&
      std::filesystem::weakly_canonical(dir, canon_ec).string() == unwatched_)
    return;
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kProberMask);
  if (wd < 0) {
    if (error_.empty()) error_ = "watch " + dir + ": " + std::strerror(errno);
    return;
  }
  watches_.emplace_back(wd, dir);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    // The prober does not follow symlinked directories' subdirectories.
    if (e.is_directory(ec) && !e.is_symlink(ec)) AddRecursive(e.path().string());
  }
}

std::vector<std::string> PluginDirWatch::Changes() {
  std::vector<std::string> changes;
  if (fd_ < 0) return changes;
  alignas(inotify_event) char buffer[16 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) break;  // EAGAIN: nothing more queued
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buffer + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->mask & IN_Q_OVERFLOW) {
        changes.push_back("(more changes than inotify could queue)");
        continue;
      }
      if (!(ev->mask & kProberMask)) continue;
      std::string dir;
      for (const auto& [wd, path] : watches_)
        if (wd == ev->wd) dir = path;
      const std::string name = ev->len > 0 ? std::string(ev->name) : std::string();
      const std::string path = name.empty() ? dir : dir + "/" + name;
      const std::string base = std::filesystem::path(path).filename().string();
      if (!base.empty() && base[0] == '.') continue;  // the prober ignores dot-names
      std::error_code ec;
      if (!unwatched_.empty() && std::filesystem::weakly_canonical(path, ec).string() == unwatched_)
        continue;
      changes.push_back(path + " (" + EventName(ev->mask) + ")");
      if ((ev->mask & IN_CREATE) && (ev->mask & IN_ISDIR)) AddRecursive(path);
    }
  }
  return changes;
}

}  // namespace flexkit::conform
