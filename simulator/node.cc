#include "simulator/node.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "platform/process_launch.h"
#include "platform/read_file.h"
#include "simulator/mount_table.h"

namespace flexkit::sim {
namespace {

std::string Why(int err) { return std::strerror(err); }

// Runs `op` (system calls only) in a child that has joined the namespace;
// returns the child's errno, 0 on success.
template <typename Op>
int RunInNamespace(int ns_fd, Op op) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return errno;
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return err;
  }
  if (pid == 0) {
    int err = 0;
    // An fs_struct of our own first: setns(CLONE_NEWNS) refuses a shared one
    // (TSan starts a helper thread in forked children).
    if (::unshare(CLONE_FS) != 0 || ::setns(ns_fd, platform::kJoinedNamespaces) != 0 || op() != 0)
      err = errno;
    ssize_t ignored = ::write(pipe_fds[1], &err, sizeof err);
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int err = EIO;
  if (::read(pipe_fds[0], &err, sizeof err) != sizeof err) err = EIO;
  ::close(pipe_fds[0]);
  ::waitpid(pid, nullptr, 0);
  return err;
}

// "mnt:[4026532731]": readlink names the namespace without what stat of
// the link costs (the kernel makes and frees an nsfs inode and dentry for
// each), and the Stop of every node reads it for every process.
bool NamespaceOf(pid_t pid, std::string& id) {
  char link[64];
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/mnt";
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof link) return false;
  id.assign(link, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

Node::Node(std::string name, const std::string& run_dir, std::map<std::string, std::string> env,
           std::unique_ptr<NamespaceHolder> holder, std::unique_ptr<NodeFilesystem> filesystem)
    : name_(std::move(name)), env_(std::move(env)), holder_(std::move(holder)) {
  std::string base = run_dir + "/nodes/" + name_;
  kubelet_root_ = base + "/var/lib/kubelet";
  plugin_dir_ = base + "/usr/libexec/kubernetes/kubelet-plugins/volume/exec";
  // The plugin dir is kubelet's to make: its prober's Init does MkdirAll
  // (one mkdir fewer per level, per node, per case, where most cases never
  // start a kubelet).
  std::filesystem::create_directories(kubelet_root_);
  if (!holder_) holder_ = std::make_unique<ProcessNamespaceHolder>();
  filesystem_ =
      filesystem ? std::move(filesystem) : std::make_unique<NamespaceFilesystem>(*holder_, name_);
  holder_->Start(name_);
  // The holder made its mounts private before it answered: nothing the
  // host mounts from now on reaches the namespace.
  mounts_at_start_ = holder_->Mounts();
}

Node::~Node() { Crash(); }

void Node::Restart() {
  holder_->Stop();
  holder_->Start(name_);
  mounts_at_start_ = holder_->Mounts();
}

void ProcessNamespaceHolder::Start(const std::string& node) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    throw std::runtime_error("start namespace of node " + node + ": pipe: " + Why(errno));
  }
  // A hostname holds at most 64 bytes: a longer node name is cut there (a
  // real node named so runs kubelet with --hostname-override).
  const std::string hostname = node.substr(0, HOST_NAME_MAX);
  const int flags = CLONE_NEWNS | (hostname_ == NodeHostname::kNodeName ? CLONE_NEWUTS : 0);
  pid_t pid = ::fork();
  if (pid < 0) {
    throw std::runtime_error("start namespace of node " + node + ": fork: " + Why(errno));
  }
  if (pid == 0) {
    // The holder: system calls only. It dies with the harness.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setpgid(0, 0);
    int err = 0;
    if (::unshare(flags) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ((flags & CLONE_NEWUTS) != 0 && ::sethostname(hostname.data(), hostname.size()) != 0)) {
      err = errno;
    }
    ::dup2(ready[1], 3);
    ::syscall(SYS_close_range, 4u, ~0u, 0u);  // hold no copy of the harness's pipes
    ssize_t ignored = ::write(3, &err, sizeof err);
    (void)ignored;
    ::close(3);
    if (err != 0) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  int err = EIO;
  if (::read(ready[0], &err, sizeof err) != sizeof err) err = EIO;
  ::close(ready[0]);
  if (err != 0) {
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("start namespace of node " + node +
                             ": unshare its mount and UTS namespaces, make / private and set "
                             "the hostname: " +
                             Why(err));
  }
  holder_pid_ = pid;
  mount_table_ = std::make_unique<MountTableWatch>(pid);
  // pidfds are close-on-exec: no driver inherits a way into another node.
  ns_fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (ns_fd_ < 0) {
    int open_err = errno;
    Stop();
    throw std::runtime_error("pidfd_open of node " + node + "'s holder: " + Why(open_err));
  }
}

std::vector<pid_t> ProcessNamespaceHolder::Processes() const {
  std::vector<pid_t> pids;
  std::string ours, theirs;
  if (holder_pid_ <= 0 || !NamespaceOf(holder_pid_, ours)) return pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == holder_pid_) continue;
    if (NamespaceOf(static_cast<pid_t>(pid), theirs) && theirs == ours) {
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  ::closedir(proc);
  return pids;
}

void ProcessNamespaceHolder::Stop() {
  if (holder_pid_ <= 0) return;
  // Kill until nothing is left: a dying process may have forked.
  for (int round = 0; round < 100; ++round) {
    auto pids = Processes();
    if (pids.empty()) break;
    for (pid_t p : pids) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(holder_pid_, SIGKILL);
  ::waitpid(holder_pid_, nullptr, 0);
  holder_pid_ = -1;
  mount_table_.reset();
  if (ns_fd_ >= 0) ::close(ns_fd_);
  ns_fd_ = -1;
}

MountTable ProcessNamespaceHolder::Mounts() const {
  if (!mount_table_) return std::make_shared<const std::vector<MountEntry>>();
  return mount_table_->Current();
}

std::string NamespaceFilesystem::InNamespace(const std::string& path) const {
  if (!holder_.running()) {
    throw FilesystemError("access " + path + " on node " + node_name_ + ": node is down", ENXIO);
  }
  return "/proc/" + std::to_string(holder_.holder_pid()) + "/root" + path;
}

void NamespaceFilesystem::Mount(const std::string& source, const std::string& target,
                                const std::string& fs_type, unsigned long flags,
                                const std::string& data) {
  InNamespace(target);  // node must be up
  int err = RunInNamespace(holder_.namespace_fd(), [&] {
    return ::mount(source.c_str(), target.c_str(), fs_type.empty() ? nullptr : fs_type.c_str(),
                   flags, data.empty() ? nullptr : data.c_str());
  });
  if (err != 0) {
    throw FilesystemError(
        "mount " + source + " on " + target + " (node " + node_name_ + "): " + Why(err), err);
  }
}

void NamespaceFilesystem::Unmount(const std::string& target) {
  InNamespace(target);
  int err = RunInNamespace(holder_.namespace_fd(),
                           [&] { return ::umount2(target.c_str(), UMOUNT_NOFOLLOW); });
  if (err != 0) {
    throw FilesystemError("unmount " + target + " (node " + node_name_ + "): " + Why(err), err);
  }
}

bool NamespaceFilesystem::IsMountPoint(const std::string& path) {
  InNamespace(path);
  std::string clean = std::filesystem::path(path).lexically_normal().string();
  if (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  const auto table = holder_.Mounts();
  return std::any_of(table->begin(), table->end(),
                     [&](const MountEntry& m) { return m.target == clean; });
}

std::vector<MountEntry> NamespaceFilesystem::Mounts() { return *holder_.Mounts(); }

std::vector<std::string> NamespaceFilesystem::ListDir(const std::string& path) {
  std::shared_lock no_launch_meanwhile(platform::LaunchLock());  // see LaunchLock
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(InNamespace(path), ec))
    names.push_back(entry.path().filename().string());
  return names;
}

bool NamespaceFilesystem::PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(InNamespace(path).c_str(), &st) == 0;
}

void NamespaceFilesystem::MakeDirs(const std::string& path, unsigned mode) {
  std::error_code ec;
  std::string real = InNamespace(path);
  std::filesystem::create_directories(real, ec);
  if (ec)
    throw FilesystemError("mkdir -p " + path + " (node " + node_name_ + "): " + ec.message(),
                          ec.value());
  ::chmod(real.c_str(), mode);
}

void NamespaceFilesystem::RemoveDir(const std::string& path) {
  // From outside the namespace rmdir would succeed on its mount point and
  // silently detach the mount; inside it, as kubelet runs, it is EBUSY.
  if (IsMountPoint(path)) {
    throw FilesystemError("rmdir " + path + " (node " + node_name_ + "): " + Why(EBUSY), EBUSY);
  }
  const std::string in_namespace = InNamespace(path);
  if (::rmdir(in_namespace.c_str()) != 0) {
    int err = errno;
    if (err == ENOTDIR && ::unlink(in_namespace.c_str()) == 0) return;
    if (err == ENOTDIR) err = errno;
    throw FilesystemError("rmdir " + path + " (node " + node_name_ + "): " + Why(err), err);
  }
}

namespace {

// The filesystem type blkid finds on `device` ("" for none); nullopt when
// the device cannot be probed.
std::optional<std::string> FilesystemOn(const std::string& device) {
  blkid_probe probe = blkid_new_probe_from_filename(device.c_str());
  if (probe == nullptr) return std::nullopt;
  std::string type;
  blkid_probe_enable_superblocks(probe, 1);
  const char* value = nullptr;
  if (blkid_do_safeprobe(probe) == 0 &&
      blkid_probe_lookup_value(probe, "TYPE", &value, nullptr) == 0) {
    type = value;
  }
  blkid_free_probe(probe);
  return type;
}

}  // namespace

void NamespaceFilesystem::FormatAndMount(const std::string& device, const std::string& target,
                                         const std::string& fs_type, bool read_only) {
  const std::string type = fs_type.empty() ? "ext4" : fs_type;
  const auto probed = FilesystemOn(device);
  if (!probed) {
    throw FilesystemError("format and mount " + device + " on " + target + " (node " + node_name_ +
                              "): cannot probe the device",
                          EIO);
  }
  const std::string existing = *probed;
  if (existing.empty()) {
    const std::string mkfs = "/sbin/mkfs." + type;
    const int rc = platform::LaunchAndWait(
        {.executable = mkfs, .args = {"-q", device}, .namespace_fd = holder_.namespace_fd()});
    if (rc != 0) {
      throw FilesystemError("format " + device + " as " + type + " (node " + node_name_ +
                                "): " + mkfs +
                                (rc < 0 ? " killed by signal " + std::to_string(-rc)
                                        : " exited " + std::to_string(rc)),
                            EIO);
    }
  }
  Mount(device, target, existing.empty() ? type : existing, read_only ? MS_RDONLY : 0, "");
}

void NamespaceFilesystem::ResizeFs(const std::string& device, const std::string& mount_path) {
  const std::string what = "resize " + (device.empty() ? std::string("\"\"") : device) + " at " +
                           mount_path + " (node " + node_name_ + ")";
  const auto type = device.empty() ? std::nullopt : FilesystemOn(device);
  if (!type) throw FilesystemError(what + ": cannot probe the device", EIO);
  platform::LaunchSpec launch{.namespace_fd = holder_.namespace_fd()};
  if (type->rfind("ext", 0) == 0) {
    launch.executable = "/sbin/resize2fs";
    launch.args = {device};
  } else if (*type == "xfs") {
    launch.executable = "/usr/sbin/xfs_growfs";
    launch.args = {"-d", mount_path};
  } else {
    throw FilesystemError(what + ": kubelet's resize does not know filesystem '" + *type + "'",
                          EINVAL);
  }
  const int rc = platform::LaunchAndWait(launch);
  if (rc != 0) {
    throw FilesystemError(
        what + ": " + launch.executable +
            (rc < 0 ? " killed by signal " + std::to_string(-rc) : " exited " + std::to_string(rc)),
        EIO);
  }
}

void NamespaceFilesystem::SetVolumeOwnership(const std::string& dir, long gid) {
  std::shared_lock no_launch_meanwhile(platform::LaunchLock());  // see LaunchLock
  std::string root = InNamespace(dir);
  auto apply = [&](const std::filesystem::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;
    if (::lchown(p.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(gid)) != 0) {
      int err = errno;
      throw FilesystemError("chown :" + std::to_string(gid) + " " + p.string() + " (node " +
                                node_name_ + "): " + Why(err),
                            err);
    }
    mode_t mode = st.st_mode | S_IRGRP | S_IWGRP;
    if (S_ISDIR(st.st_mode)) mode |= S_IXGRP | S_ISGID;
    ::chmod(p.c_str(), mode & 07777);
  };
  apply(root);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    apply(it->path());
  }
}

long NamespaceFilesystem::GroupOf(const std::string& path) {
  struct stat st {};
  if (::lstat(InNamespace(path).c_str(), &st) != 0) {
    int err = errno;
    throw FilesystemError("stat " + path + " (node " + node_name_ + "): " + Why(err), err);
  }
  return static_cast<long>(st.st_gid);
}

void NamespaceFilesystem::WriteFile(const std::string& path, const std::string& content) {
  std::shared_lock no_launch_meanwhile(platform::LaunchLock());  // see LaunchLock
  std::string real = InNamespace(path);
  int fd = ::open(real.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    throw FilesystemError("write " + path + " (node " + node_name_ + "): " + Why(err), err);
  }
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
            ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) throw FilesystemError("write " + path + " (node " + node_name_ + "): " + Why(err), err);
}

std::string NamespaceFilesystem::ReadFile(const std::string& path) {
  std::shared_lock no_launch_meanwhile(platform::LaunchLock());  // see LaunchLock
  try {
    return platform::ReadWholeFile(InNamespace(path));
  } catch (const std::system_error& e) {
    const int err = e.code().value();
    throw FilesystemError("read " + path + " (node " + node_name_ + "): " + Why(err), err);
  }
}

}  // namespace flexkit::sim
