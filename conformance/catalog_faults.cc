// [faults]: a backend that cannot answer (F28). The controller reads
// isattached to decide what is attached where: a driver that answers
// Success + attached:false when it could not ask its backend makes the
// controller believe a volume is free that is not (kubernetes attacher.go
// VolumesAreAttached). Such an error must be a Failure, which kubelet and
// the controller treat as "unknown" and retry.
#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

std::string AttachableWithNodeBackends(const DriverProfile& p) {
  if (!p.attachable()) return "capability: init says attach:false";
  if (p.fixture.kind != "convoy-fake")
    return "profile: only the convoy-fake fixture can cut a node off its backend";
  return "";
}

void IsAttachedWithBackendDown(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v);
  c.transcript().AddEvent("backend unreachable", {{"node", n.name()}});
  c.fixture().SetBackendReachable(n, false);
  auto is = c.Call(n, c.argv().IsAttached(c.Json(spec), n.name()), "controller");
  c.fixture().SetBackendReachable(n, true);
  c.transcript().AddEvent("backend reachable", {{"node", n.name()}});
  if (is.ok() && is.verdict.status && !is.verdict.status->attached) {
    c.Fail("F28 (protocol §7: isattached must not hide a backend error)",
           "with the backend unreachable, isattached answered Success with attached:false for a "
           "volume that is attached; it must answer Failure");
  }
  TearDownAll(c);
}

}  // namespace

void AddFaultCases(std::vector<Case>& cases) {
  cases.push_back({"faults/isattached-with-backend-unreachable",
                   {"faults", "root"},
                   {"F28", "F30"},
                   AttachableWithNodeBackends,
                   IsAttachedWithBackendDown});
}

}  // namespace flexkit::conform
