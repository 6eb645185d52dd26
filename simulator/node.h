#pragma once
// A simulated host: a name, its kubelet root and plugin dir under the run
// dir, its environment, and a private mount namespace held open by a holder
// process (DESIGN §8: nothing is ever mounted in the caller's namespace).
// Drivers for the node are exec'd inside that namespace. Crash kills every
// process in the namespace, so its mounts vanish; restart makes a new one
// over the same disk.
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator/mounter.h"

namespace flexkit::sim {

class Node {
 public:
  // Creates the node's directories under `run_dir`/nodes/`name` and starts
  // its namespace. Needs CAP_SYS_ADMIN.
  Node(std::string name, const std::string& run_dir, std::map<std::string, std::string> env = {});
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return name_; }
  const std::string& kubelet_root() const { return kubelet_root_; }
  const std::string& plugin_dir() const { return plugin_dir_; }
  const std::map<std::string, std::string>& env() const { return env_; }

  bool running() const { return holder_pid_ > 0; }
  pid_t holder_pid() const { return holder_pid_; }
  int mount_namespace_fd() const { return ns_fd_; }  // -1 while crashed

  // Kills every process in the namespace (drivers, their daemons, the
  // holder); the namespace and its mounts are gone.
  void Crash();
  // A fresh namespace over the same directories.
  void Restart();
  // Partitioned: the controller cannot reach it (treated as unhealthy).
  void SetPartitioned(bool partitioned) { partitioned_ = partitioned; }
  bool partitioned() const { return partitioned_; }

  // Processes (other than the holder) living in the namespace now.
  std::vector<pid_t> ProcessesInNamespace() const;

  Mounter& mounter() { return *mounter_; }

 private:
  void Start();
  std::string name_;
  std::string kubelet_root_;
  std::string plugin_dir_;
  std::map<std::string, std::string> env_;
  pid_t holder_pid_ = -1;
  int ns_fd_ = -1;
  bool partitioned_ = false;
  std::unique_ptr<Mounter> mounter_;
};

// mount(2) and file operations inside a node's namespace: mounts through a
// short-lived child that joins the namespace, files through
// /proc/<holder>/root (which resolves paths in the holder's mount table).
class NamespaceMounter : public Mounter {
 public:
  explicit NamespaceMounter(const Node& node) : node_(node) {}
  void Mount(const std::string& source, const std::string& target, const std::string& fs_type,
             unsigned long flags, const std::string& data) override;
  void Unmount(const std::string& target) override;
  bool IsMountPoint(const std::string& path) override;
  bool PathExists(const std::string& path) override;
  void MakeDirs(const std::string& path, unsigned mode) override;
  void RemoveDir(const std::string& path) override;
  void FormatAndMount(const std::string& device, const std::string& target,
                      const std::string& fs_type, bool read_only) override;
  void SetVolumeOwnership(const std::string& dir, long gid) override;
  long GroupOf(const std::string& path) override;
  void WriteFile(const std::string& path, const std::string& content) override;
  std::string ReadFile(const std::string& path) override;

 private:
  std::string InNamespace(const std::string& path) const;
  const Node& node_;
};

}  // namespace flexkit::sim
