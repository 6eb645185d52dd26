#include "conformance/catalog.h"

namespace flexkit::conform {

std::string Always(const DriverProfile&) { return ""; }
std::string AttachableOnly(const DriverProfile& p) {
  return p.attachable() ? "" : "capability: init says attach:false";
}
std::string MountOnly(const DriverProfile& p) {
  return p.attachable() ? "capability: init says attach:true (the attachable lifecycle covers it)"
                        : "";
}

void CheckDataRoundTrip(CaseContext& c, const PodVolume& v, const std::string& file) {
  const std::string path = v.pod_dir + "/" + file;
  const std::string content = "flexconform " + v.spec.name + "\n";
  try {
    v.node->mounter().WriteFile(path, content);
  } catch (const std::exception& e) {
    c.Fail("protocol §7: a mounted volume is writable through the pod dir",
           std::string("write: ") + e.what());
  }
  std::string back;
  try {
    back = v.node->mounter().ReadFile(path);
  } catch (const std::exception& e) {
    c.Fail("protocol §7: data written is read back", std::string("read: ") + e.what());
  }
  if (back != content) c.Fail("protocol §7: data written is read back", "read back '" + back + "'");
}

void TearDownAll(CaseContext& c) {
  auto errors = c.tracker().UnwindAll();
  if (!errors.empty()) c.Fail("protocol §7: teardown succeeds", errors.front());
}

std::vector<Case> Catalog(const CatalogOptions& options) {
  std::vector<Case> cases;
  AddProtocolCases(cases);
  AddLifecycleCases(cases);
  AddIdempotencyCases(cases);
  AddTeardownCases(cases);
  AddReadOnlyCases(cases);
  AddFsTypeCases(cases);
  AddSecretsCases(cases);
  AddRobustnessCases(cases);
  AddInstallCases(cases);
  AddDriftCases(cases);
  AddResizeCases(cases);
  AddMetricsCases(cases);
  AddFaultCases(cases);
  AddFailoverCases(cases);
  AddSequenceCases(cases, options.sequence);
  return cases;
}

}  // namespace flexkit::conform
