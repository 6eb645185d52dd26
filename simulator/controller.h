#pragma once
// The attach/detach controller (reference §5.3-§5.5, §5.10, §7.1, §7.4):
// desired state (volume, node) from pods on controller-managed nodes; actual
// state from what it attached. Each Reconcile(): detach what is no longer
// desired once the node's volumesInUse has cleared, or by force after
// maxWaitForUnmountDuration when the node is unhealthy; attach what is
// desired, refusing a second node for RWO-only PVs (inline volumes exempt);
// every sync period, isattached for each attachment. Attach and detach
// errors leave the attachment uncertain, retried with kube-controller-
// manager's exponential back-off on the virtual clock: no retry for 500 ms
// after a failure, doubling to at most 2m2s; a success forgets it.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulator/cluster_state.h"
#include "simulator/prober.h"
#include "simulator/virtual_clock.h"
#include "simulator/volume_operations.h"

namespace flexkit::sim {

struct ControllerSettings {
  Clock::Duration sync_period = std::chrono::minutes(1);
  Clock::Duration max_wait_for_unmount = std::chrono::minutes(6);
  bool disable_force_detach_on_timeout = false;
};

class AttachDetachController {
 public:
  // `control_plane` is where kube-controller-manager execs drivers; its
  // plugin dir is the controller's --flex-volume-plugin-dir.
  AttachDetachController(Node& control_plane, ClusterState& cluster, DriverInvoker& invoker,
                         const VersionProfile& profile, Transcript& transcript, const Clock& clock,
                         const std::map<std::string, Node*>& nodes,
                         ControllerSettings settings = {});

  std::vector<std::string> Reconcile();

  struct Attachment {
    VolumeSpec spec;
    std::string device;
    bool uncertain = false;  // an attach or detach error: state unknown
    Clock::Duration unwanted_since{-1};
  };
  // (unique volume name, node) -> attachment
  const std::map<std::pair<std::string, std::string>, Attachment>& attachments() const {
    return actual_;
  }
  // A controller restart: new plugin objects, caches dropped.
  void Restart();
  // The earliest time an operation held back by its back-off in the last
  // Reconcile may run again; nullopt when none was held back.
  std::optional<Clock::Duration> NextRetry() const;

 private:
  struct Want {
    VolumeSpec spec;
    std::shared_ptr<FlexPlugin> plugin;
  };
  // (unique volume name, node) -> what a pod there needs
  using DesiredState = std::map<std::pair<std::string, std::string>, Want>;
  using ErrorSink = std::function<void(const std::string&)>;
  // The phases of one Reconcile, in order.
  DesiredState PopulateDesiredState(const ErrorSink& record);
  void DetachUnwanted(const DesiredState& desired, Clock::Duration now, const ErrorSink& record);
  void AttachDesired(const DesiredState& desired, Clock::Duration now, const ErrorSink& record);
  void VerifyAttached(const ErrorSink& record);  // every sync period

  using OperationKey = std::pair<std::string, std::string>;  // (unique volume name, node)
  struct Backoff {
    std::string operation;  // "attach" or "detach": another one starts afresh
    Clock::Duration retry_at{0};
    Clock::Duration wait{0};
    std::string error;
  };
  // True when `operation` on `key` waits out its back-off; its last error
  // is then reported again at the end of the round.
  bool BackingOff(const OperationKey& key, const std::string& operation, Clock::Duration now);
  void Failed(const OperationKey& key, const std::string& operation, Clock::Duration now,
              const std::string& error);

  bool NodeHealthy(const std::string& node) const;
  void Detach(const std::pair<std::string, std::string>& key, Attachment& a);

  Node& control_plane_;
  ClusterState& cluster_;
  DriverInvoker& invoker_;
  const VersionProfile& profile_;
  Transcript& transcript_;
  const Clock& clock_;
  const std::map<std::string, Node*>& nodes_;  // the cluster's, kept current
  ControllerSettings settings_;
  std::unique_ptr<Prober> prober_;
  std::unique_ptr<ProberCaller> caller_;
  std::unique_ptr<VolumeOperations> ops_;
  std::map<std::pair<std::string, std::string>, Attachment> actual_;
  std::map<OperationKey, Backoff> backoff_;  // operations that failed last time
  std::set<OperationKey> waiting_;           // this round's operations held back
  Clock::Duration last_sync_{-1};
};

}  // namespace flexkit::sim
