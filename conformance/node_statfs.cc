#include "conformance/node_statfs.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace flexkit::conform {

std::optional<FsStats> StatFsOnNode(const sim::Node& n, const std::string& path, std::string* err) {
  if (!n.running()) {
    *err = "statfs " + path + ": node " + n.name() + " is not running";
    return std::nullopt;
  }
  const std::string seen = "/proc/" + std::to_string(n.holder_pid()) + "/root" + path;
  struct statvfs fs {};
  if (::statvfs(seen.c_str(), &fs) != 0) {
    *err = "statfs " + path + " on " + n.name() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::stat(seen.c_str(), &st) != 0) {
    *err = "stat " + path + " on " + n.name() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  FsStats s;
  s.capacity_bytes = static_cast<std::uint64_t>(fs.f_blocks) * fs.f_frsize;
  s.available_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  s.inodes = fs.f_files;
  s.inodes_free = fs.f_ffree;
  s.device = st.st_dev;
  return s;
}

std::optional<std::uint64_t> ParseSizeOption(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  const std::uint64_t number = std::stoull(text.substr(0, digits));
  const std::string suffix = text.substr(digits);
  struct Unit {
    const char* suffix;
    std::uint64_t factor;
  };
  static const Unit kUnits[] = {{"", 1},
                                {"k", 1000},
                                {"K", 1000},
                                {"Ki", 1ull << 10},
                                {"m", 1000 * 1000},
                                {"M", 1000 * 1000},
                                {"Mi", 1ull << 20},
                                {"g", 1000 * 1000 * 1000},
                                {"G", 1000 * 1000 * 1000},
                                {"Gi", 1ull << 30},
                                {"T", 1000ull * 1000 * 1000 * 1000},
                                {"Ti", 1ull << 40}};
  for (const auto& u : kUnits) {
    if (suffix == u.suffix) return number * u.factor;
  }
  return std::nullopt;
}

}  // namespace flexkit::conform
