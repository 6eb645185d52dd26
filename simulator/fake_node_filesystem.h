#pragma once
// A node without root, for in-process tests of kubelet, the controller, the
// prober and the cluster (as ninja's VirtualFileSystem stands beside
// RealDiskInterface, and mount-utils' FakeMounter beside its Mounter): a
// file tree and a mount table in memory, and a namespace holder with no
// process. Mounts behave as the kernel's do where kubelet's rules depend on
// them: a bind mount shows its source, a device mount shows the device's
// own files (kept across unmounts and restarts), a tmpfs is empty on every
// mount, rmdir of a mount point is
// EBUSY, writes under a read-only mount are EROFS, Stop drops every mount
// and keeps the files. Errors can be injected per operation and path.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "simulator/node.h"

namespace flexkit::sim {

class FakeNodeFilesystem : public NodeFilesystem {
 public:
  // A node whose holder and filesystem are these fakes.
  static std::unique_ptr<Node> MakeNode(const std::string& name, const std::string& run_dir,
                                        std::map<std::string, std::string> env = {});
  // The fake behind a node made by MakeNode.
  static FakeNodeFilesystem& Of(Node& node);

  void Mount(const std::string& source, const std::string& target, const std::string& fs_type,
             unsigned long flags, const std::string& data) override;
  void Unmount(const std::string& target) override;
  bool IsMountPoint(const std::string& path) override;
  std::vector<MountEntry> Mounts() override;
  bool PathExists(const std::string& path) override;
  void MakeDirs(const std::string& path, unsigned mode) override;
  void RemoveDir(const std::string& path) override;
  std::vector<std::string> ListDir(const std::string& path) override;
  void FormatAndMount(const std::string& device, const std::string& target,
                      const std::string& fs_type, bool read_only) override;
  void ResizeFs(const std::string& device, const std::string& mount_path) override;
  void SetVolumeOwnership(const std::string& dir, long gid) override;
  long GroupOf(const std::string& path) override;
  void WriteFile(const std::string& path, const std::string& content) override;
  std::string ReadFile(const std::string& path) override;

  // The next `times` calls of `operation` ("mount", "unmount", "rmdir",
  // "mkdir", "format", "resize") on `path` fail with errno `code`.
  void InjectError(const std::string& operation, const std::string& path, int code, int times = 1);
  // Devices with a filesystem, and its type (FormatAndMount formats the rest).
  std::map<std::string, std::string>& formatted_devices() { return formatted_; }
  // Every operation, in order, as "mount SRC TARGET", "unmount TARGET",
  // "rmdir PATH", "mkdir PATH", "format DEVICE TYPE", "resize DEVICE PATH".
  const std::vector<std::string>& operations() const { return operations_; }

  // The holder's namespace came up or went away.
  void NamespaceStarted() { up_ = true; }
  void NamespaceStopped();

 private:
  struct Entry {
    bool directory = true;
    std::string content;
    long gid = 0;
    unsigned mode = 0755;
  };
  struct FakeMount {
    MountEntry entry;
    std::string storage;  // where the files under the target live
    bool read_only = false;
  };
  std::string Normal(const std::string& path) const;
  const FakeMount* MountOver(const std::string& path) const;  // deepest mount holding path
  std::string Storage(const std::string& path) const;
  void CheckUp(const std::string& what, const std::string& path) const;
  void Injected(const std::string& operation, const std::string& path);
  [[noreturn]] void Fail(const std::string& what, int code) const;
  void CheckWritable(const std::string& what, const std::string& path) const;

  bool up_ = false;
  std::map<std::string, Entry> entries_;  // by storage path
  std::vector<FakeMount> mounts_;         // in mount order
  std::map<std::string, std::string> formatted_;
  std::map<std::pair<std::string, std::string>, std::pair<int, int>>
      injected_;  // -> (errno, times)
  std::vector<std::string> operations_;
  int tmpfs_mounts_ = 0;
};

// A namespace holder without a process: it tells the fake filesystem when
// the namespace comes and goes (the filesystem must outlive its calls).
class FakeNamespaceHolder : public NamespaceHolder {
 public:
  explicit FakeNamespaceHolder(FakeNodeFilesystem& filesystem) : filesystem_(filesystem) {}
  void Start(const std::string&) override {
    running_ = true;
    filesystem_.NamespaceStarted();
  }
  void Stop() override {
    if (!running_) return;
    running_ = false;
    filesystem_.NamespaceStopped();
  }
  bool running() const override { return running_; }
  pid_t holder_pid() const override { return -1; }
  int namespace_fd() const override { return -1; }
  std::vector<pid_t> Processes() const override { return {}; }
  MountTable Mounts() const override {
    return std::make_shared<const std::vector<MountEntry>>(filesystem_.Mounts());
  }

 private:
  FakeNodeFilesystem& filesystem_;
  bool running_ = false;
};

}  // namespace flexkit::sim
