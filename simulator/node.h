#pragma once
// A simulated host: a name, its kubelet root and plugin dir under the run
// dir, its environment, a private mount namespace kept alive by a holder
// (DESIGN §8: nothing is ever mounted in the caller's namespace), and the
// filesystem kubelet sees there. Drivers for the node are exec'd inside
// that namespace. Crash kills every process in the namespace, so its mounts
// vanish; restart makes a new one over the same disk. The holder and the
// filesystem are injected: the real ones (a holder process, mount(2) in
// the namespace) need CAP_SYS_ADMIN, the fakes (fake_node_filesystem.h) run
// in memory.
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator/mount_table.h"
#include "simulator/node_filesystem.h"

namespace flexkit::sim {

// A node's namespaces (mount, UTS), held open while the node runs.
class NamespaceHolder {
 public:
  virtual ~NamespaceHolder() = default;
  // A fresh namespace; throws std::runtime_error naming `node` and the cause.
  virtual void Start(const std::string& node) = 0;
  // Kills every process in the namespace, then the holder: its mounts vanish.
  virtual void Stop() = 0;
  virtual bool running() const = 0;
  virtual pid_t holder_pid() const = 0;  // -1 when there is no process
  // A pidfd of the holder: setns(fd, platform::kJoinedNamespaces) joins the node. -1
  // while stopped, or in memory.
  virtual int namespace_fd() const = 0;
  virtual std::vector<pid_t> Processes() const = 0;  // in the namespace, the holder aside
  // The namespace's mount table now; empty while stopped.
  virtual MountTable Mounts() const = 0;
};

// The hostname a node's processes see: the node's name, in a UTS namespace
// of its own, as every node of a real cluster has its own (drivers key
// locks and identities on it: two simulated nodes sharing one would let
// a host-named lock admit both); or the host's, on a live node, where
// the real backend knows the machine by its real name.
enum class NodeHostname { kNodeName, kHost };

// The control plane's node name, which is also the hostname its processes
// see: kube-controller-manager runs attach, detach and isattached there,
// never on the node they name.
inline constexpr char kControlPlaneName[] = "control-plane";

// A holder process that unshared its mount namespace (made / private) and,
// with NodeHostname::kNodeName, its UTS namespace, and pauses; it dies with
// the harness.
class ProcessNamespaceHolder : public NamespaceHolder {
 public:
  explicit ProcessNamespaceHolder(NodeHostname hostname = NodeHostname::kNodeName)
      : hostname_(hostname) {}
  ~ProcessNamespaceHolder() override { Stop(); }
  void Start(const std::string& node) override;
  void Stop() override;
  bool running() const override { return holder_pid_ > 0; }
  pid_t holder_pid() const override { return holder_pid_; }
  int namespace_fd() const override { return ns_fd_; }
  std::vector<pid_t> Processes() const override;
  MountTable Mounts() const override;

 private:
  NodeHostname hostname_;
  pid_t holder_pid_ = -1;
  int ns_fd_ = -1;  // a pidfd of the holder
  // Read through while running; closed by Stop, as it holds the namespace.
  mutable std::unique_ptr<MountTableWatch> mount_table_;
};

class Node {
 public:
  // Creates the node's kubelet root under `run_dir`/nodes/`name` and starts
  // its namespace. `holder` null: a ProcessNamespaceHolder; `filesystem`
  // null: a NamespaceFilesystem over the holder (both need CAP_SYS_ADMIN).
  Node(std::string name, const std::string& run_dir, std::map<std::string, std::string> env = {},
       std::unique_ptr<NamespaceHolder> holder = nullptr,
       std::unique_ptr<NodeFilesystem> filesystem = nullptr);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return name_; }
  const std::string& kubelet_root() const { return kubelet_root_; }
  const std::string& plugin_dir() const { return plugin_dir_; }
  const std::map<std::string, std::string>& env() const { return env_; }

  bool running() const { return holder_->running(); }
  pid_t holder_pid() const { return holder_->holder_pid(); }
  int namespace_fd() const { return holder_->namespace_fd(); }  // -1 while crashed

  // Kills every process in the namespace (drivers, their daemons, the
  // holder); the namespace and its mounts are gone.
  void Crash() { holder_->Stop(); }
  // A fresh namespace over the same directories.
  void Restart();
  // Partitioned: the controller cannot reach it (treated as unhealthy).
  void SetPartitioned(bool partitioned) { partitioned_ = partitioned; }
  bool partitioned() const { return partitioned_; }

  // Processes (other than the holder) living in the namespace now.
  std::vector<pid_t> ProcessesInNamespace() const { return holder_->Processes(); }
  // The mounts in the namespace now (empty while crashed).
  MountTable Mounts() const { return holder_->Mounts(); }
  // The mounts the namespace had when it started (made, or last restarted):
  // copies of the host's at that moment, none of them made on the node. A
  // restart copies the host's mounts anew, those another program made
  // meanwhile too, so what the node did is Mounts() less these.
  const MountTable& MountsAtStart() const { return mounts_at_start_; }

  NodeFilesystem& filesystem() { return *filesystem_; }

 private:
  std::string name_;
  std::string kubelet_root_;
  std::string plugin_dir_;
  std::map<std::string, std::string> env_;
  bool partitioned_ = false;
  // The filesystem may use the holder: declared first, destroyed last.
  std::unique_ptr<NamespaceHolder> holder_;
  std::unique_ptr<NodeFilesystem> filesystem_;
  MountTable mounts_at_start_;
};

// mount(2) and file operations inside a holder's namespace: mounts through
// a short-lived child that joins the namespace, files through
// /proc/<holder>/root (which resolves paths in the holder's mount table).
class NamespaceFilesystem : public NodeFilesystem {
 public:
  NamespaceFilesystem(const NamespaceHolder& holder, std::string node_name)
      : holder_(holder), node_name_(std::move(node_name)) {}
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

 private:
  std::string InNamespace(const std::string& path) const;
  const NamespaceHolder& holder_;
  std::string node_name_;
};

}  // namespace flexkit::sim
