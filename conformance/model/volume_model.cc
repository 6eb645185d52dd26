#include "conformance/model/volume_model.h"

#include <stdexcept>

namespace flexkit::conform::model {

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kAttach:
      return "attach";
    case Verb::kWaitForAttach:
      return "waitforattach";
    case Verb::kIsAttached:
      return "isattached";
    case Verb::kMountDevice:
      return "mountdevice";
    case Verb::kMount:
      return "mount";
    case Verb::kUnmount:
      return "unmount";
    case Verb::kUnmountDevice:
      return "unmountdevice";
    case Verb::kDetach:
      return "detach";
  }
  return "?";
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess:
      return "Success";
    case Outcome::kFailure:
      return "Failure";
    case Outcome::kNotSupported:
      return "Not supported";
  }
  return "?";
}

bool PodReadOnly(int pod) { return pod % 2 == 1; }

std::string ActionName(const Action& action) {
  std::string name =
      std::string(VerbName(action.verb)) + "(node-" + std::to_string(action.node + 1);
  if (action.pod >= 0) {
    name += ",pod-" + std::to_string(action.pod + 1) + (PodReadOnly(action.pod) ? ":ro" : ":rw");
  }
  return name + ")";
}

std::string SequenceName(const Sequence& sequence) {
  std::string name;
  for (const auto& a : sequence) name += (name.empty() ? "" : " ; ") + ActionName(a);
  return name.empty() ? "(empty)" : name;
}

std::string StateName(const State& state) {
  std::string name;
  for (std::size_t n = 0; n < state.nodes.size(); ++n) {
    const auto& s = state.nodes[n];
    std::string parts;
    auto add = [&parts](const std::string& part) { parts += (parts.empty() ? "" : ",") + part; };
    if (s.attached) add("attached");
    if (s.device_mounted) add("device");
    for (int p = 0; p < 32; ++p) {
      if (s.PodMounted(p)) add("pod-" + std::to_string(p + 1));
    }
    name += (name.empty() ? "" : " ") + ("node-" + std::to_string(n + 1)) + "{" + parts + "}";
  }
  return name;
}

VolumeModel::VolumeModel(Domain domain) : domain_(domain) {
  if (domain_.nodes < 1 || domain_.pods < 1 || domain_.pods > 32) {
    throw std::invalid_argument("model domain: 1+ nodes and 1-32 pods per node");
  }
  for (int n = 0; n < domain_.nodes; ++n) {
    auto add = [&](Verb verb, int pod = -1) {
      Action a;
      a.verb = verb;
      a.node = n;
      a.pod = pod;
      actions_.push_back(a);
    };
    if (domain_.attachable) {
      add(Verb::kAttach);
      add(Verb::kWaitForAttach);
      add(Verb::kIsAttached);
      add(Verb::kMountDevice);
    }
    for (int p = 0; p < domain_.pods; ++p) add(Verb::kMount, p);
    for (int p = 0; p < domain_.pods; ++p) add(Verb::kUnmount, p);
    if (domain_.attachable) {
      add(Verb::kUnmountDevice);
      add(Verb::kDetach);
    }
  }
}

State VolumeModel::Initial() const {
  State s;
  s.nodes.resize(static_cast<std::size_t>(domain_.nodes));
  return s;
}

bool VolumeModel::Enabled(const State& state, const Action& action) const {
  if (action.node < 0 || action.node >= domain_.nodes) return false;
  const bool pod_verb = action.verb == Verb::kMount || action.verb == Verb::kUnmount;
  if (pod_verb != (action.pod >= 0) || action.pod >= domain_.pods) return false;
  const NodeState& here = state.nodes[static_cast<std::size_t>(action.node)];
  if (!domain_.attachable) return pod_verb;  // §7.2: only mount and unmount
  switch (action.verb) {
    case Verb::kAttach:
      // §7.4 step 2: a RWO volume attached elsewhere gets a Multi-Attach
      // error from the controller, which does not call attach.
      for (std::size_t n = 0; n < state.nodes.size(); ++n) {
        if (static_cast<int>(n) != action.node && state.nodes[n].attached) return false;
      }
      return true;
    case Verb::kWaitForAttach:  // §7.1 step 7: only once node status lists it
    case Verb::kMountDevice:    // §7.1 step 9: after waitforattach
      return here.attached;
    case Verb::kIsAttached:  // §5.5: answered for both states (§8 item 9)
      return true;
    case Verb::kMount:  // §7.1 step 10: after the device is globally mounted
      return here.device_mounted;
    case Verb::kUnmount:  // §5.8: no mount check; called whenever the dir exists
      return true;
    case Verb::kUnmountDevice:  // §5.9 step 2: refused while a pod mount references it
      return here.pods_mounted == 0;
    case Verb::kDetach:  // §7.1 step 13 / §7.3: after unmountdevice (no force detach here)
      return !here.device_mounted;
  }
  return false;
}

std::vector<Action> VolumeModel::EnabledActions(const State& state) const {
  std::vector<Action> enabled;
  for (const auto& a : actions_) {
    if (Enabled(state, a)) enabled.push_back(a);
  }
  return enabled;
}

Expectation VolumeModel::Expect(const State& state, const Action& action) const {
  if (!Enabled(state, action)) {
    throw std::logic_error("model: " + ActionName(action) + " is not enabled in " +
                           StateName(state));
  }
  const NodeState& here = state.nodes[static_cast<std::size_t>(action.node)];
  Expectation e;
  e.allowed = {Outcome::kSuccess};
  switch (action.verb) {
    case Verb::kAttach:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: default Attach, device ""
      e.device_required = true;
      e.rule = here.attached ? "F9 attach-idempotent: attach of an attached volume succeeds"
                             : "F8 attach-device: attach returns the device";
      break;
    case Verb::kWaitForAttach:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: kubelet echoes the device
      e.rule = "F8 waitforattach-device: waitforattach returns the device";
      break;
    case Verb::kIsAttached:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: considered attached, no change
      e.check_attached = true;
      e.attached = here.attached;
      e.rule = "F28 isattached-honest: isattached reports the attachment truthfully";
      break;
    case Verb::kMountDevice:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: kubelet formats and mounts
      e.rule = here.device_mounted
                   ? "F9 mountdevice-idempotent: mountdevice is \"ensure mounted\""
                   : "F19 mountdevice-mounts: mountdevice leaves a real mount at the path";
      break;
    case Verb::kMount:
      // §3.4: the bind-mount fallback needs a global mount (§7.2: a driver
      // without attach must implement mount).
      if (domain_.attachable) e.allowed.insert(Outcome::kNotSupported);
      e.rule = here.PodMounted(action.pod)
                   ? "F9 mount-idempotent: mount is \"ensure mounted\", read-only kept"
                   : "mount-succeeds: mount of a valid volume succeeds, read-only honoured";
      break;
    case Verb::kUnmount:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: kubelet unmounts
      e.rule = here.PodMounted(action.pod)
                   ? "F11 unmount-unmounts: unmount leaves the dir unmounted and removable"
                   : "F10 unmount-idempotent: unmount of an unmounted dir succeeds";
      break;
    case Verb::kUnmountDevice:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: kubelet unmounts
      e.rule = here.device_mounted
                   ? "F11 unmountdevice-unmounts: unmountdevice unmounts"
                   : "F10 unmountdevice-idempotent: unmountdevice is \"ensure unmounted\"";
      break;
    case Verb::kDetach:
      e.allowed.insert(Outcome::kNotSupported);  // §3.4: default detach is a no-op
      e.rule = here.attached ? "F12 detach-succeeds: detach succeeds"
                             : "F12 detach-idempotent: detach of a detached volume succeeds";
      break;
  }
  return e;
}

State VolumeModel::Next(const State& state, const Action& action) const {
  State next = state;
  NodeState& here = next.nodes[static_cast<std::size_t>(action.node)];
  const std::uint32_t pod_bit = action.pod >= 0 ? 1u << action.pod : 0u;
  switch (action.verb) {
    case Verb::kAttach:
      here.attached = true;
      break;
    case Verb::kWaitForAttach:
    case Verb::kIsAttached:
      break;
    case Verb::kMountDevice:
      here.device_mounted = true;
      break;
    case Verb::kMount:
      here.pods_mounted |= pod_bit;
      break;
    case Verb::kUnmount:
      here.pods_mounted &= ~pod_bit;
      break;
    case Verb::kUnmountDevice:
      here.device_mounted = false;
      break;
    case Verb::kDetach:
      here.attached = false;
      break;
  }
  return next;
}

bool VolumeModel::Feasible(const Sequence& sequence) const {
  State s = Initial();
  for (const auto& a : sequence) {
    if (!Enabled(s, a)) return false;
    s = Next(s, a);
  }
  return true;
}

}  // namespace flexkit::conform::model
