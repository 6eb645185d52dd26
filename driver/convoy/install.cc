#include "driver/convoy/install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "driver/sdk/file_text.h"

namespace convoy_flexvolume {
namespace {

std::string ReadAll(const std::string& path) {
  auto bytes = flexvolume::ReadFileText(path);
  if (!bytes) throw std::runtime_error("read " + path + ": " + std::strerror(errno));
  return std::move(*bytes);
}

void Check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

InstallResult InstallDriver(const std::string& source, const std::string& plugin_dir,
                            const std::string& vendor_dir, const std::string& name) {
  if (plugin_dir.empty()) throw std::runtime_error("--plugin-dir must not be empty");
  const std::string dir = plugin_dir + "/" + vendor_dir;
  const std::string target = dir + "/" + name;
  const std::string bytes = ReadAll(source);

  std::error_code ec;
  // The plugin dir is kubelet's (--volume-plugin-dir): a missing one is a
  // mistyped path or the wrong host, not something to create.
  if (!std::filesystem::is_directory(plugin_dir, ec))
    throw std::runtime_error(plugin_dir +
                             " is not a directory: give kubelet's --volume-plugin-dir (it must "
                             "exist; kubelet creates it at start)");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("create " + dir + ": " + ec.message());

  struct stat st {};
  if (stat(target.c_str(), &st) == 0 && (st.st_mode & 0777) == 0755 && ReadAll(target) == bytes) {
    return InstallResult::kAlreadyInstalled;
  }

  const std::string tmp = dir + "/." + name + ".tmp-" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  Check(fd >= 0, "create " + tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      close(fd);
      unlink(tmp.c_str());
      errno = saved;
      Check(false, "write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = fsync(fd) == 0 && fchmod(fd, 0755) == 0;
  const int saved = errno;
  close(fd);
  if (!synced || rename(tmp.c_str(), target.c_str()) != 0) {
    const int rename_errno = synced ? errno : saved;
    unlink(tmp.c_str());
    errno = rename_errno;
    Check(false, "install " + target);
  }
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return InstallResult::kInstalled;
}

}  // namespace convoy_flexvolume
