#include "driver/convoy/record_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "driver/sdk/file_text.h"

namespace convoy_flexvolume {
namespace {

bool SafeComponent(const std::string& part) {
  if (part.empty() || part.size() > 253 || part == "." || part == ".." || part[0] == '.')
    return false;
  for (char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string RecordStore::PathFor(const std::vector<std::string>& key) const {
  if (key.empty()) return "";
  std::string path = dir_;
  for (const std::string& part : key) {
    if (!SafeComponent(part)) return "";
    path += "/" + part;
  }
  return path;
}

void RecordStore::Put(const std::vector<std::string>& key, const std::string& value) {
  const std::string path = PathFor(key);
  if (path.empty()) {
    throw std::runtime_error("cannot keep a record under " + dir_ +
                             ": a key part is not a safe file name");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw std::runtime_error("create " + parent.string() + ": " + ec.message());
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("write " + tmp + ": " + std::strerror(errno));
  const bool written =
      write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size()) && fsync(fd) == 0;
  const int saved = errno;
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(written ? errno : saved);
    unlink(tmp.c_str());
    throw std::runtime_error("write " + path + ": " + why);
  }
}

std::optional<std::string> RecordStore::Get(const std::vector<std::string>& key) const {
  const std::string path = PathFor(key);
  if (path.empty()) return std::nullopt;
  return flexvolume::ReadFileText(path);
}

void RecordStore::Erase(const std::vector<std::string>& key) {
  const std::string path = PathFor(key);
  if (!path.empty()) unlink(path.c_str());
}

}  // namespace convoy_flexvolume
