#include "fakes/convoy/daemon_setup.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "fakes/common/files.h"
#include "platform/read_file.h"

namespace flexkit::fakes::convoy {

RootLock::RootLock(const std::string& root) : path_(root + "/lock") {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw ConvoyError("Failed to lock the file at " + path_ + ": " +
                      GoErrno(err == EWOULDBLOCK ? EAGAIN : err));
  }
}

RootLock::~RootLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

PersistedSettings LoadOrSaveSettings(const PersistedSettings& from_flags) {
  const std::string& root = from_flags.daemon.root;
  std::string cfg_path = root + "/convoy.cfg";
  std::string vfs_cfg = root + "/vfs/vfs.cfg";
  struct stat st {};
  if (::stat(cfg_path.c_str(), &st) != 0) {
    nlohmann::ordered_json cfg = {{"Root", root},
                                  {"DriverList", from_flags.daemon.drivers},
                                  {"DefaultDriver", from_flags.daemon.drivers.front()},
                                  {"MountNamespaceFD", ""},
                                  {"IgnoreDockerDelete", from_flags.daemon.ignore_docker_delete},
                                  {"CreateOnDockerMount", from_flags.daemon.create_on_docker_mount},
                                  {"CmdTimeout", ""}};
    WriteFileAtomically(cfg_path, cfg.dump() + "\n");
    return from_flags;
  }
  PersistedSettings out = from_flags;
  auto cfg = nlohmann::json::parse(platform::ReadWholeFile(cfg_path));
  out.daemon.drivers = cfg.at("DriverList").get<std::vector<std::string>>();
  out.daemon.ignore_docker_delete = cfg.value("IgnoreDockerDelete", false);
  out.daemon.create_on_docker_mount = cfg.value("CreateOnDockerMount", false);
  if (::stat(vfs_cfg.c_str(), &st) == 0) {
    out.vfs_path =
        nlohmann::json::parse(platform::ReadWholeFile(vfs_cfg)).value("Path", from_flags.vfs_path);
  }
  return out;
}

}  // namespace flexkit::fakes::convoy
