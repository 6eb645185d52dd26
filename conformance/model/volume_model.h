#pragma once
// The reference model of one volume's lifecycle (flexvolume-protocol §5,
// §7), independent of any driver: the abstract state of the volume across
// nodes, which calls kubelet or the attach/detach controller would make in
// that state, the outcomes a correct driver may give, and the next state.
// Plain C++: no simulator, no processes; the sequence cases run it beside
// the real driver and compare every step.
#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace flexkit::conform::model {

enum class Verb {
  kAttach,
  kWaitForAttach,
  kIsAttached,
  kMountDevice,
  kMount,
  kUnmount,
  kUnmountDevice,
  kDetach,
};
const char* VerbName(Verb verb);  // the protocol spelling: "waitforattach", ...

enum class Outcome { kSuccess, kFailure, kNotSupported };
const char* OutcomeName(Outcome outcome);

// The argument domain: `nodes` nodes, `pods` pod volume dirs per node. Pod
// p is mounted read-only iff p is odd (a pod's readOnly never changes, so a
// repeated mount of a dir always asks for what the first one did).
struct Domain {
  int nodes = 1;
  int pods = 2;
  bool attachable = false;
};
bool PodReadOnly(int pod);

struct Action {
  Verb verb = Verb::kMount;
  int node = 0;
  int pod = -1;  // mount and unmount only
  auto operator<=>(const Action&) const = default;
};
// "mount(node-1,pod-2:ro)": node and pod numbered from 1 as the harness names them.
std::string ActionName(const Action& action);
using Sequence = std::vector<Action>;
std::string SequenceName(const Sequence& sequence);  // actions joined by " ; "

struct NodeState {
  bool attached = false;
  bool device_mounted = false;
  std::uint32_t pods_mounted = 0;  // bit p: pod p's dir is mounted
  bool PodMounted(int pod) const { return (pods_mounted >> pod) & 1u; }
  auto operator<=>(const NodeState&) const = default;
};

struct State {
  std::vector<NodeState> nodes;
  auto operator<=>(const State&) const = default;
};
std::string StateName(const State& state);  // "node-1{attached,device,pod-1}"

// What a correct driver must answer to one call in one state.
struct Expectation {
  std::set<Outcome> allowed;
  bool check_attached = false;   // isattached: `attached` must equal...
  bool attached = false;         // ...this, when it answers Success
  bool device_required = false;  // attach/waitforattach: Success carries a device
  std::string rule;              // the reference section it follows
};

class VolumeModel {
 public:
  explicit VolumeModel(Domain domain);
  const Domain& domain() const { return domain_; }

  State Initial() const;
  // Every action of the domain, in a fixed order (the enumerator's order).
  const std::vector<Action>& Actions() const { return actions_; }
  // Whether kubelet or the controller would make this call in `state`.
  bool Enabled(const State& state, const Action& action) const;
  std::vector<Action> EnabledActions(const State& state) const;
  Expectation Expect(const State& state, const Action& action) const;
  // The state after an allowed outcome (a Not supported is followed by
  // kubelet's fallback, which leaves the same state as Success).
  State Next(const State& state, const Action& action) const;
  // Whether every step of `sequence` is enabled, starting from Initial().
  bool Feasible(const Sequence& sequence) const;

 private:
  Domain domain_;
  std::vector<Action> actions_;
};

}  // namespace flexkit::conform::model
