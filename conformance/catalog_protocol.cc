// [protocol] [init]: the reply format of every verb, exact status strings,
// exit codes agreeing with the status, unknown verbs, getvolumename, and
// init: fast, side-effect free, capabilities as the profile says.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>

#include "conformance/catalog.h"
#include "simulator/verdict_json.h"

namespace flexkit::conform {
namespace {

// Regular files under `dir` (a node's directories): init must create none.
std::size_t CountFiles(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    ++n;
  }
  return n;
}

void InitReply(CaseContext& c) {
  auto& n = c.node();
  const auto before = CountFiles(n.kubelet_root()) + CountFiles(n.plugin_dir());
  auto start = std::chrono::steady_clock::now();
  auto r = c.Require(c.ops().CallInit(n, sim::Component::kKubelet, c.profile().driver_name), "init",
                     "F3/F4/F5 init-success: init answers Success, exit 0");
  auto took = std::chrono::steady_clock::now() - start;
  const auto& status = *r.verdict.status;
  if (!status.capabilities) {
    c.Fail("F8 init-capabilities: init reports capabilities", "init said \"capabilities\": null");
  }
  if (c.profile().capabilities && !(*status.capabilities == *c.profile().capabilities)) {
    c.Fail("F8 capabilities-match: capabilities match the driver",
           "init capabilities " + sim::CapabilitiesToJson(*status.capabilities).dump() +
               " differ from the profile's " +
               sim::CapabilitiesToJson(*c.profile().capabilities).dump());
  }
  if (CountFiles(n.kubelet_root()) + CountFiles(n.plugin_dir()) != before) {
    c.Fail("init-side-effect-free: init is side-effect free",
           "init created files in the node's kubelet or plugin dir");
  }
  if (took > std::chrono::seconds(2)) {
    c.Warn("init took " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
           " ms: kubelet probes on every change in the plugin dir, init should be instant");
  }
}

// The made-up verb comes with arguments as every verb kubelet sends does
// (a JSON and a path): a driver that checks its arity before its verb
// still answers a verb of a newer kubelet.
void UnknownVerb(CaseContext& c) {
  const std::string json = c.ops().OptionsJson(c.Volume(c.Unique("vol")));
  for (const std::string verb : {"flexconform-no-such-verb", "expandvolume", "expandfs"}) {
    sim::Args args{verb, json, "/nonexistent"};
    if (verb == "expandvolume") args = {verb, "{}", "/nonexistent", "2147483648", "1073741824"};
    if (verb == "expandfs")
      args = {verb, "{}", "/dev/null", "/nonexistent", "2147483648", "1073741824"};
    for (int i = 0; i < c.repeat(); ++i) {
      auto r =
          c.ops().CallDriver(c.node(), sim::Component::kKubelet, c.profile().driver_name, args);
      if (verb.rfind("flexconform", 0) == 0 && !r.not_supported()) {
        c.Fail("F6 unknown-verb: an unknown verb gets {\"status\":\"Not supported\"}, exit 0",
               verb + ": got " + sim::OutcomeName(r.verdict.outcome) + " " + r.verdict.error);
      }
    }
  }
}

// kubelet and the controller ask an attachable driver's getvolumename
// all the time; a driver without attach only on mount's Not supported
// fallback (§7.2), which a mount-only driver does not have: there its
// failure is a call kubelet never makes.
void GetVolumeName(CaseContext& c) {
  auto spec = c.Volume(c.Unique("vol"));
  if (!c.profile().attachable()) {
    auto r = c.beyond_kubelet().CallGetVolumeName(c.node(), sim::Component::kKubelet, spec);
    if (!r.ok() && !r.not_supported())
      c.Warn("getvolumename failed: " + r.verdict.error +
             " [kubelet asks a driver without attach only when its mount is Not supported "
             "(RULES.md F29 getvolumename-never-fails)]");
    return;
  }
  auto r = c.ops().CallGetVolumeName(c.node(), sim::Component::kKubelet, spec);
  if (!r.ok() && !r.not_supported()) {
    c.Fail("F29 getvolumename-never-fails: getvolumename never fails; kubelet ignores it",
           "getvolumename failed: " + r.verdict.error);
  }
}

// kube-controller-manager runs attach, isattached and detach from a
// distroless image: no shell, no tools on PATH (RULES.md F2
// controller-path). A driver that needs them cannot attach in such a
// cluster: one finding, saying what to do, FAIL with controller-managed
// attach, WARN when the profile says kubelet-managed (it works only as long
// as the cluster keeps it that way). Every other case runs the controller's
// verbs with the node's PATH, so this one fact does not hide the rest of
// the driver.
//
// The environment is to blame only for what it changes: a verb that fails
// in the control plane is made again with the node's PATH, and only one
// that then succeeds counts. A verb that fails either way (a backend that
// refuses, a driver that is broken) is another case's finding, and a
// profile whose controlPlanePath holds the driver's tools has none here.
void ControllerVerbsWithoutShellTools(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  const std::string rule =
      "F2 controller-path: kube-controller-manager has no shell tools, a minimal PATH";
  const auto by = sim::Component::kController;
  using Verb = std::function<sim::CallResult(sim::VolumeOperations&)>;
  const std::vector<std::pair<std::string, Verb>> verbs = {
      {"attach", [&](auto& ops) { return ops.CallAttach(n, by, spec, n.name()); }},
      {"isattached", [&](auto& ops) { return ops.CallIsAttached(n, by, spec, n.name()); }},
      {"detach", [&](auto& ops) { return ops.CallDetach(n, by, spec, n.name()); }},
  };
  // Detached again whatever happens, in the environment the profile's cluster uses.
  c.tracker().Push("detach " + spec.name, [&c, &n, spec] { c.Detach(n, spec); });
  std::map<std::string, std::string> failed_there;  // verb -> why
  const std::size_t mark = c.findings().size();
  for (const auto& [verb, call] : verbs) {
    const sim::CallResult r = call(c.control_plane());
    if (r.ok() || r.not_supported()) continue;
    failed_there[verb] = r.harness_problem.empty() ? r.verdict.error : r.harness_problem;
  }
  if (failed_there.empty()) return TearDownAll(c);
  // The same verbs with the node's PATH: a comparison kubelet never makes,
  // so what it finds on its own is a warning.
  std::string failed;
  std::string first_error;
  for (const auto& [verb, call] : verbs) {
    const sim::CallResult r = call(c.beyond_kubelet());
    const auto there = failed_there.find(verb);
    if (there == failed_there.end() || !(r.ok() || r.not_supported())) continue;
    failed += (failed.empty() ? "" : ", ") + verb;
    if (first_error.empty()) first_error = verb + ": " + there->second;
  }
  if (failed.empty()) {
    // Not the environment: a reply the shell broke there breaks on the node too.
    for (const auto& f : c.findings()) {
      if (f.rule == rule) c.Withdraw(mark, f.rule, f.why);
    }
  } else {
    const std::string why =
        failed +
        " fail as a distroless kube-controller-manager runs them (PATH=" + c.ControlPlanePath() +
        ", no /bin/sh in the image) and succeed with the node's PATH: " + first_error +
        ". Run the controller's verbs where the driver's tools are: kubelet-managed attach "
        "(kubelet --enable-controller-attach-detach=false), or a controller image that has "
        "them (then name its PATH in the profile's controlPlanePath)";
    if (c.profile().kubelet_managed_attach) {
      c.Warn(why + " [" + rule + "; a WARN: the profile says kubelet-managed attach]");
    } else {
      c.Record(rule, why);
    }
  }
  TearDownAll(c);
}

}  // namespace

void AddProtocolCases(std::vector<Case>& cases) {
  cases.push_back({"protocol/init-reply",
                   {"protocol", "init"},
                   {"F1", "F3", "F4", "F5", "F8"},
                   Always,
                   InitReply});
  cases.push_back(
      {"protocol/unknown-verb-not-supported", {"protocol"}, {"F6", "F7"}, Always, UnknownVerb});
  cases.push_back(
      {"protocol/getvolumename-never-fails", {"protocol"}, {"F29"}, Always, GetVolumeName});
  cases.push_back({"protocol/controller-verbs-without-shell-tools",
                   {"protocol", "attach"},
                   {"F2"},
                   AttachableOnly,
                   ControllerVerbsWithoutShellTools});
}

}  // namespace flexkit::conform
