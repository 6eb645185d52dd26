// Which cases catch each failure mode of conformance-anchors.md §6. A mode
// with cases lists them (computed from the catalog's tags, so the table
// cannot drift); a mode without says why.
#include <map>

#include "conformance/catalog.h"

namespace flexkit::conform {

std::vector<Coverage> CoverageTable() {
  static const std::map<int, std::pair<std::string, std::string>> modes = {
      {1, {"stdout/stderr pollution", "every call of every case: combined output must decode"}},
      {2,
       {"non-JSON from shell portability (echo -ne)",
        "every call of every case: combined output must decode"}},
      {3, {"empty output / missing status", "every call of every case"}},
      {4,
       {"exit code disagrees with status",
        "every call: Success+exit≠0 fails the call; Failure+exit 0 warns"}},
      {5,
       {"non-canonical status strings",
        "every call: only Success/Not supported succeed; near misses warn"}},
      {6, {"unknown verb not answered Not supported", ""}},
      {7,
       {"transient Not supported",
        "every call: a verb's Not supported must be stable within a case"}},
      {8, {"init capabilities wrong or missing", ""}},
      {9, {"mount not idempotent", ""}},
      {10, {"unmount of an unmounted dir fails", ""}},
      {11,
       {"unmount leaves the mount or a busy dir",
        "every teardown: pod dir must be unmounted and removable; every mount/mountdevice "
        "Success: the target is a mount point and a file written there reads back"}},
      {12, {"detach not idempotent", ""}},
      {13,
       {"detach argument confusion", "detach always gets the volume name, as kubelet sends it"}},
      {14,
       {"failover race (double attach)",
        "node crash/return/partition under the simulator's kubelets and attach/detach "
        "controller, with the fake backend's never-two-attachments check and checksums after "
        "the move; SKIP without a fixture that can crash a node's backend"}},
      {15,
       {"detach while mountdevice runs",
        "the pod deleted while the node's hung daemon holds mountdevice (convoy-fake fixture)"}},
      {16,
       {"hangs", "every call of every case: per-verb harness deadline, \"would hang kubelet\""}},
      {17, {"child holds the output pipe", "every call of every case: pipe held after exit"}},
      {18, {"readOnly ignored", ""}},
      {19, {"fsType ignored or reformat", ""}},
      {20, {"secret decoding", ""}},
      {21, {"secret leakage", "every call: no secret (raw or base64) in any reply"}},
      {22, {"option-key drift (fsGroup)", "both spellings, as kubelet 1.7 and current send them"}},
      {23,
       {"argv-shape drift",
        "kubelets 1.7, 1.15 and current; legacy-1.5 and 1.6 shapes through flexsim --kubernetes"}},
      {24,
       {"hostile option values",
        "every call: no canary of the case's hostile values (secrets, free-text options) "
        "may appear"}},
      {25, {"prefix-sharing paths", ""}},
      {26, {"leaks (mounts, devices, files, processes)", "every case: leak audit before/after"}},
      {27, {"non-atomic install during probe", ""}},
      {28, {"isattached hides backend errors", "the node's backend cut off (convoy-fake fixture)"}},
      {29, {"getvolumename assumptions", ""}},
      {30, {"crash paths emit non-JSON", "every call of every case, and invalid base64 input"}},
  };
  std::vector<Coverage> table;
  const auto cases = Catalog();
  for (const auto& [number, info] : modes) {
    const std::string f = "F" + std::to_string(number);
    std::string names;
    for (const auto& c : cases) {
      for (const auto& m : c.failure_modes) {
        if (m == f) names += (names.empty() ? "" : ", ") + c.name;
      }
    }
    std::string note = info.second;
    if (!names.empty()) note = names + (note.empty() ? "" : "; " + note);
    table.push_back({f, info.first, note.empty() ? "NOT COVERED" : note});
  }
  return table;
}

}  // namespace flexkit::conform
