#pragma once
// The backend a driver needs, fresh for every case (issue 6): nothing, the
// fake Convoy/EBS (one `convoy-fake cloud`, one `convoy-fake daemon` per
// node started inside that node's mount namespace, and a per-node driver
// config naming that node's socket), or the profile's own commands.
#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/profile.h"
#include "simulator/node.h"

namespace flexkit::conform {

class Fixture {
 public:
  virtual ~Fixture() = default;
  // Environment the driver gets on `node` (known before the node exists).
  virtual std::map<std::string, std::string> NodeEnv(const std::string& node,
                                                     const std::string& case_dir) = 0;
  // Starts the backend for a case whose nodes now exist. Throws on failure.
  virtual void Start(const std::string& case_dir, std::vector<sim::Node*> nodes) = 0;
  // Stops everything Start began; returns problems (never throws).
  virtual std::vector<std::string> Stop() = 0;
  // Processes the fixture owns (not leaks of the driver).
  virtual std::vector<pid_t> Pids() const = 0;

  // Failover (issue 7): what a node's backend does when the node crashes,
  // comes back or is cut off. A fixture without per-node backends does
  // nothing here and says so, and the [failover] cases SKIP.
  virtual bool HasNodeBackends() const { return false; }
  // Called after sim::Node::Crash, which killed every process in the
  // node's namespace (its daemon too): the node's cloud instance stops.
  virtual void NodeCrashed(sim::Node&) {}
  // Called after sim::Node::Restart: the instance runs again and the
  // node's daemon starts inside the new namespace over its old state.
  virtual void NodeRestarted(sim::Node&) {}
  // The node's daemon stops answering (false) or answers again (true);
  // the node and its instance keep running throughout.
  virtual void SetBackendReachable(sim::Node&, bool) {}
  // Backend volume id -> the nodes it is attached to now; nullopt when
  // the fixture cannot see the backend.
  virtual std::optional<std::map<std::string, std::vector<std::string>>> Attachments() {
    return std::nullopt;
  }
  // Every moment the backend saw one volume attached to two nodes (the
  // fake cloud checks this on each change); empty when it never did.
  virtual std::vector<std::string> DoubleAttachments() { return {}; }
  // Where the backend's servers log one line per request (for the HTML
  // report's timelines), by server: "cloud", or the node whose daemon it is.
  virtual std::map<std::string, std::string> RequestLogs() const { return {}; }
};

// `flexconform_dir`: where flexconform lives, to find convoy-fake beside it.
std::unique_ptr<Fixture> MakeFixture(const FixtureSpec& spec, const std::string& flexconform_dir);

}  // namespace flexkit::conform
