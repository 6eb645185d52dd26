#pragma once
// The backend a driver needs, fresh for every case: nothing, the
// fake Convoy/EBS (one `convoy-fake cloud`, one `convoy-fake daemon` per
// node started inside that node's mount namespace, and a per-node driver
// config naming that node's socket), or the profile's own commands
// (command_fixture.h). Every driver call of the case gets
// FLEXCONFORM_CASE_DIR, the case's scratch dir, in its environment: it
// ties what a driver leaves on the host to the case (leak_audit.h), and a
// test driver may keep its backend there.
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

  // What a node's backend does when the node crashes, comes back or is cut
  // off, and what the backend says is attached where: the hooks of
  // profile.h's FixtureHookNames. Has(hook) says which this fixture does;
  // a case needing one it lacks SKIPs naming it. The node itself crashes
  // and restarts in the simulator (its namespace and every process in it
  // killed) whatever the fixture does. A hook that fails throws CaseFailure
  // (rule "fixture") naming the hook and its output.
  virtual bool Has(const std::string& /*hook*/) const { return false; }
  // After sim::Node::Crash: the backend sees the node's machine stop.
  virtual void NodeCrashed(sim::Node&) {}
  // After sim::Node::Restart: the machine runs again and the node's own
  // agent starts inside the new namespace.
  virtual void NodeRestarted(sim::Node&) {}
  // The node is cut off its backend (false) or reaches it again (true);
  // the node keeps running throughout.
  virtual void SetBackendReachable(sim::Node&, bool) {}
  // Backend volume id -> the nodes it is attached to now; nullopt when
  // the fixture cannot see the backend (then the driver's isattached is
  // the witness).
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

// The environment every fixture gives the driver on every node.
std::map<std::string, std::string> CaseEnv(const std::string& case_dir);

// `flexconform_dir`: where flexconform lives, to find convoy-fake beside it.
std::unique_ptr<Fixture> MakeFixture(const FixtureSpec& spec, const std::string& flexconform_dir);

}  // namespace flexkit::conform
