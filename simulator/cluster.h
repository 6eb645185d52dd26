#pragma once
// A simulated cluster: nodes (each a mount namespace with its kubelet), a
// control-plane node where the attach/detach controller execs drivers, the
// API objects, one transcript and one virtual clock.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "simulator/controller.h"
#include "simulator/kubelet.h"
#include "simulator/manifest.h"

namespace flexkit::sim {

using NodeFactory = std::function<std::unique_ptr<Node>(
    const std::string& name, const std::string& run_dir, std::map<std::string, std::string> env)>;

struct ClusterConfig {
  std::string run_dir;
  std::string profile = "current";
  CallSettings call;
  ControllerSettings controller;
  // The driver's environment on the control plane (kube-controller-manager).
  std::map<std::string, std::string> control_plane_env;
  // Makes every node, the control plane too; empty: a real Node (its own
  // mount namespace, CAP_SYS_ADMIN). Tests pass FakeNodeFilesystem::MakeNode.
  NodeFactory make_node;
};

// The files a driver brings beside its executable (a sourced common.sh,
// an init helper), installed with it: the regular files of its folder,
// dot-files left out. A folder of its own (vendor~driver) is the driver's
// whole; any other folder counts only while it is small (16 files, 8 MiB),
// since a larger one is a bin or build dir whose files are not the driver's.
std::vector<std::filesystem::path> DriverHelpers(const std::filesystem::path& driver);

class Cluster {
 public:
  // `transcript`: where calls and events go; null: the cluster's own.
  Cluster(ClusterConfig config, ProcessRunner& runner, Transcript* transcript = nullptr);
  ~Cluster();

  // A node with its own namespace and kubelet; env is the driver's environment there.
  void AddNode(const std::string& name, bool controller_managed_attach = true,
               std::map<std::string, std::string> env = {});
  // A node the caller made and keeps (it must outlive the cluster), such as
  // one whose backend already runs in its namespace; it gets a kubelet. The
  // driver copies the cluster installs there go with the cluster.
  void AdoptNode(Node& node, bool controller_managed_attach = true);
  // Copies the driver and its DriverHelpers into every plugin dir (nodes
  // and control plane), as <vendor~drv>/<drv>, through a dot-file and
  // rename. `driver_name` empty:
  // the executable's folder name says it (tests/data/drivers/vendor~drv/drv).
  void InstallDriver(const std::string& executable, const std::string& driver_name = "");
  // Adds or replaces the objects; Node documents add nodes.
  void Apply(const Manifest& manifest);
  void DeletePod(const std::string& ns, const std::string& name);

  // Controller and kubelets in rounds until nothing changes (at most
  // `max_rounds`). A round that changes nothing while the controller holds
  // a failed operation back moves the clock to its retry. Returns the
  // errors of the last round.
  std::vector<std::string> Settle(int max_rounds = 8);
  // Moves the virtual clock, then settles.
  std::vector<std::string> Advance(Clock::Duration d, int max_rounds = 8);

  void CrashNode(const std::string& name);    // the node and its kubelet are gone
  void RestartNode(const std::string& name);  // new namespace, kubelet reconstructs
  void RestartKubelet(const std::string& name);
  // kubelet down (its node and mounts stay): no syncs until StartKubelet,
  // which starts it like a restart (reconstruction).
  void StopKubelet(const std::string& name);
  void StartKubelet(const std::string& name);

  Node& node(const std::string& name);
  Kubelet& kubelet(const std::string& name);
  AttachDetachController& controller() { return *controller_; }
  ClusterState& state() { return state_; }
  Transcript& transcript() { return transcript_; }
  const VersionProfile& profile() const { return profile_; }
  const Pod& pod(const std::string& ns, const std::string& name) const;
  // Live log: cluster events and one line per driver call.
  void SetLog(std::function<void(const std::string&)> log);

 private:
  std::string Fingerprint() const;
  void Log(const std::string& line);
  void AddKubelet(Node& node, bool controller_managed_attach);
  std::unique_ptr<Node> MakeNode(const std::string& name, std::map<std::string, std::string> env);

  ClusterConfig config_;
  const VersionProfile& profile_;
  Transcript own_transcript_;
  Transcript& transcript_;
  DriverInvoker invoker_;
  VirtualClock clock_;
  ClusterState state_;
  std::unique_ptr<Node> control_plane_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;  // made by AddNode
  std::map<std::string, Node*> node_ptrs_;              // every node, adopted ones too
  std::vector<Node*> adopted_;
  std::map<std::string, std::unique_ptr<Kubelet>> kubelets_;
  std::unique_ptr<AttachDetachController> controller_;
  std::set<std::string> stopped_kubelets_;
  std::vector<std::pair<std::string, std::string>> drivers_;  // (source, dir name)
  std::function<void(const std::string&)> log_;
};

}  // namespace flexkit::sim
