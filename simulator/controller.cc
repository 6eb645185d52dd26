#include "simulator/controller.h"

#include <algorithm>
#include <stdexcept>

namespace flexkit::sim {
namespace {
constexpr const char* kControllerComponent = "controller";
// nestedpendingoperations' exponentialbackoff: initialDurationBeforeRetry
// and maxDurationBeforeRetry.
constexpr Clock::Duration kInitialBackoff = std::chrono::milliseconds(500);
constexpr Clock::Duration kMaxBackoff = std::chrono::seconds(122);
}  // namespace

AttachDetachController::AttachDetachController(Node& control_plane, ClusterState& cluster,
                                               DriverInvoker& invoker,
                                               const VersionProfile& profile,
                                               Transcript& transcript, const Clock& clock,
                                               const std::map<std::string, Node*>& nodes,
                                               ControllerSettings settings)
    : control_plane_(control_plane),
      cluster_(cluster),
      invoker_(invoker),
      profile_(profile),
      transcript_(transcript),
      clock_(clock),
      nodes_(nodes),
      settings_(settings) {
  Restart();
}

void AttachDetachController::Restart() {
  backoff_.clear();  // kept in memory only
  prober_ = std::make_unique<Prober>(control_plane_, control_plane_.plugin_dir(),
                                     kControllerComponent, invoker_, profile_);
  caller_ = std::make_unique<ProberCaller>(*prober_);
  ops_ = std::make_unique<VolumeOperations>(profile_, *caller_);
}

bool AttachDetachController::BackingOff(const OperationKey& key, const std::string& operation,
                                        Clock::Duration now) {
  auto it = backoff_.find(key);
  if (it == backoff_.end() || now >= it->second.retry_at) return false;
  if (it->second.operation != operation) {  // as nestedpendingoperations resets it
    backoff_.erase(it);
    return false;
  }
  waiting_.insert(key);
  return true;
}

void AttachDetachController::Failed(const OperationKey& key, const std::string& operation,
                                    Clock::Duration now, const std::string& error) {
  Backoff& b = backoff_[key];
  if (b.operation != operation) b = Backoff{operation, {}, {}, {}};
  b.wait = b.wait.count() == 0 ? kInitialBackoff : std::min(2 * b.wait, kMaxBackoff);
  b.retry_at = now + b.wait;
  b.error = error;
}

std::optional<Clock::Duration> AttachDetachController::NextRetry() const {
  std::optional<Clock::Duration> next;
  for (const auto& key : waiting_) {
    const Clock::Duration at = backoff_.at(key).retry_at;
    if (!next || at < *next) next = at;
  }
  return next;
}

bool AttachDetachController::NodeHealthy(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second->running() && !it->second->partitioned();
}

void AttachDetachController::Detach(const std::pair<std::string, std::string>& key, Attachment& a) {
  const auto& [unique, node] = key;
  // Node status is updated before the detach call (k/k#27837).
  cluster_.node_status[node].volumes_attached.erase(unique);
  Step d = ops_->Detach(control_plane_, Component::kController, a.spec, node);
  if (!d.ok()) {
    a.uncertain = true;
    throw std::runtime_error("DetachVolume of " + unique + " from " + node + " failed: " + d.error);
  }
}

std::vector<std::string> AttachDetachController::Reconcile() {
  std::vector<std::string> errors;
  auto record = [&](const std::string& e) {
    errors.push_back(e);
    transcript_.AddEvent("controller error", {{"error", e}});
  };
  const auto now = clock_.Now();
  const DesiredState desired = PopulateDesiredState(record);
  waiting_.clear();
  DetachUnwanted(desired, now, record);
  AttachDesired(desired, now, record);
  if (last_sync_.count() < 0 || now - last_sync_ >= settings_.sync_period) {
    last_sync_ = now;
    VerifyAttached(record);
  }
  // Held back, not retried: still failing as far as anyone can tell.
  for (const auto& key : waiting_) {
    const Backoff& b = backoff_.at(key);
    errors.push_back(b.error + " (no retries permitted for " +
                     std::to_string((b.retry_at - now).count()) + " ms)");
  }
  return errors;
}

// The desired-state populator: attachable volumes of pods on
// controller-managed nodes, each named through getvolumename.
AttachDetachController::DesiredState AttachDetachController::PopulateDesiredState(
    const ErrorSink& record) {
  DesiredState desired;
  for (const auto& [key, pod] : cluster_.pods) {
    if (pod.node.empty() || !cluster_.node_status[pod.node].controller_managed_attach) continue;
    for (const auto& v : pod.volumes) {
      try {
        ResolvedVolume r = cluster_.Resolve(pod, v);
        auto plugin = prober_->Find(r.spec.driver);
        if (!plugin || !plugin->capabilities.attach) continue;
        Step name = ops_->GetVolumeName(control_plane_, Component::kController, r.spec);
        if (!name.ok()) {
          record("getvolumename for " + r.spec.name + " failed: " + name.error);
          continue;
        }
        std::string unique = profile_.plugin_name_prefix + r.spec.driver + "/" + r.spec.name;
        desired[{unique, pod.node}] = {r.spec, plugin};
      } catch (const std::exception& e) {
        record(e.what());
      }
    }
  }
  return desired;
}

// Detach what is no longer desired once the node's volumesInUse has
// cleared, or by force after maxWaitForUnmountDuration on an unhealthy node.
void AttachDetachController::DetachUnwanted(const DesiredState& desired, Clock::Duration now,
                                            const ErrorSink& record) {
  for (auto it = actual_.begin(); it != actual_.end();) {
    auto& [key, a] = *it;
    if (desired.count(key) != 0) {
      a.unwanted_since = Clock::Duration(-1);
      ++it;
      continue;
    }
    if (a.unwanted_since.count() < 0) a.unwanted_since = now;
    const auto& [unique, node] = key;
    const bool in_use = cluster_.node_status[node].volumes_in_use.count(unique) != 0;
    if (in_use) {
      bool timed_out = now - a.unwanted_since >= settings_.max_wait_for_unmount;
      bool force = timed_out && !NodeHealthy(node) && !settings_.disable_force_detach_on_timeout;
      if (!force) {
        ++it;
        continue;
      }
      transcript_.AddEvent("force detach", {{"volume", unique}, {"node", node}});
    }
    auto plugin = prober_->Find(a.spec.driver);
    if (!plugin) {
      record("DetachVolume of " + unique + ": no volume plugin matched " + a.spec.driver);
      ++it;
      continue;
    }
    if (BackingOff(key, "detach", now)) {
      ++it;
      continue;
    }
    try {
      Detach(key, a);
      backoff_.erase(key);
      it = actual_.erase(it);
    } catch (const std::exception& e) {
      Failed(key, "detach", now, e.what());
      record(e.what());
      ++it;
    }
  }
}

// Attach what is desired and not attached (or uncertain), refusing a
// second node for an RWO-only PV (inline volumes have no access modes).
void AttachDetachController::AttachDesired(const DesiredState& desired, Clock::Duration now,
                                           const ErrorSink& record) {
  for (const auto& [key, want] : desired) {
    const auto& [unique, node] = key;
    auto existing = actual_.find(key);
    if (existing != actual_.end() && !existing->second.uncertain) continue;
    if (want.spec.read_write_once_only) {
      bool elsewhere = false;
      for (const auto& [k, a] : actual_) elsewhere |= k.first == unique && k.second != node;
      if (elsewhere) {
        transcript_.AddEvent("Multi-Attach error",
                             {{"volume", unique},
                              {"node", node},
                              {"message",
                               "Volume is already exclusively attached to one node "
                               "and can't be attached to another"}});
        continue;
      }
    }
    if (BackingOff(key, "attach", now)) continue;
    Step attach = ops_->Attach(control_plane_, Component::kController, want.spec, node);
    Attachment& a = actual_[key];
    a.spec = want.spec;
    if (!attach.ok()) {
      a.uncertain = true;  // a later detach may be issued
      const std::string error =
          "AttachVolume of " + unique + " to " + node + " failed: " + attach.error;
      Failed(key, "attach", now, error);
      record(error);
      continue;
    }
    backoff_.erase(key);
    a.uncertain = false;
    a.device = attach.device;
    cluster_.node_status[node].volumes_attached[unique] = a.device;
  }
}

// VolumesAreAttached: isattached for each certain attachment; a failure
// abandons the node's batch and keeps all of it, "not attached" drops one.
void AttachDetachController::VerifyAttached(const ErrorSink& record) {
  std::set<std::string> aborted_nodes;
  for (auto it = actual_.begin(); it != actual_.end();) {
    auto& [key, a] = *it;
    const auto& [unique, node] = key;
    auto plugin = prober_->Find(a.spec.driver);
    if (a.uncertain || !plugin || aborted_nodes.count(node) != 0) {
      ++it;
      continue;
    }
    Step is = ops_->IsAttached(control_plane_, Component::kController, a.spec, node);
    if (!is.ok()) {
      aborted_nodes.insert(node);
      record("VolumesAreAttached on " + node + " failed: " + is.error);
      ++it;
    } else if (!is.attached) {
      cluster_.node_status[node].volumes_attached.erase(unique);
      transcript_.AddEvent("marked detached", {{"volume", unique}, {"node", node}});
      it = actual_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace flexkit::sim
