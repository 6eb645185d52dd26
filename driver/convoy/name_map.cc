#include "driver/convoy/name_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/convoy/names.h"

namespace convoy_flexvolume {

std::string NameMap::PathFor(const std::string& node, const std::string& pv_name) const {
  const std::string node_part = node.empty() ? "_local" : node;
  if ((!node.empty() && !IsSafeNodeName(node)) || !IsValidVolumeName(pv_name)) return "";
  return root_ + "/" + node_part + "/" + pv_name;
}

bool NameMap::Record(const std::string& node, const std::string& pv_name,
                     const std::string& convoy_name, std::string* err) {
  const std::string path = PathFor(node, pv_name);
  if (path.empty()) {
    *err = "cannot record the Convoy name for " + Quoted(pv_name) + " on node " + Quoted(node);
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) {
    *err = "create " + std::filesystem::path(path).parent_path().string() + ": " + ec.message();
    return false;
  }
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *err = "write " + tmp + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = write(fd, convoy_name.data(), convoy_name.size()) ==
                      static_cast<ssize_t>(convoy_name.size()) &&
                  fsync(fd) == 0;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    *err = "write " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::optional<std::string> NameMap::Lookup(const std::string& node,
                                           const std::string& pv_name) const {
  const std::string path = PathFor(node, pv_name);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const std::string name = text.str();
  if (!IsValidVolumeName(name)) return std::nullopt;
  return name;
}

void NameMap::Forget(const std::string& node, const std::string& pv_name) {
  const std::string path = PathFor(node, pv_name);
  if (!path.empty()) unlink(path.c_str());
}

}  // namespace convoy_flexvolume
