// [robustness]: option values that break shell drivers (F24), volumes whose
// paths share a prefix (F25), concurrent calls on different volumes. Hangs
// and held pipes (F16, F17) are checked on every call of every case.
#include <exception>
#include <thread>

#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

void HostileOptionValues(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  spec.options["flexconform/spaces"] = "a value  with   spaces and\ttabs";
  spec.options["flexconform/quotes"] = R"(it's "quoted" \"escaped\" `back`)";
  spec.options["flexconform/substitution"] = "$(touch /tmp/flexconform-pwned) ${HOME} * ?";
  spec.options["flexconform/unicode"] = "ünïcødé — 日本語 \u2028 <>&";
  spec.options["flexconform/long"] = std::string(64 * 1024, 'x');
  auto v = c.SetUp(n, spec, c.Pod("pod with spaces"));
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// vol and vol0: a substring match on mount paths (Azure smb's ismounted)
// takes one for the other.
void PrefixSharingPaths(CaseContext& c) {
  auto& n = c.node();
  const std::string base = c.Unique("vol");
  auto pod = c.Pod("pod");
  auto longer = c.SetUp(n, c.Volume(base + "0"), pod);
  auto shorter = c.SetUp(n, c.Volume(base), pod);
  if (!n.mounter().IsMountPoint(shorter.pod_dir) && shorter.driver_mounted) {
    c.Fail("F25 (protocol §7: mount state is exact, not a path prefix)",
           "mount of " + shorter.pod_dir + " said Success but mounted nothing while " +
               longer.pod_dir + " was mounted");
  }
  CheckDataRoundTrip(c, shorter);
  c.tracker().RunNow(shorter.pod_undo);
  if (!n.mounter().IsMountPoint(longer.pod_dir)) {
    c.Fail("F25 (protocol §7: unmount touches only its own dir)",
           "unmount of " + shorter.pod_dir + " unmounted " + longer.pod_dir);
  }
  CheckDataRoundTrip(c, longer);
  TearDownAll(c);
}

void ConcurrentVolumes(CaseContext& c) {
  auto& n = c.node();
  constexpr int kVolumes = 4;
  std::vector<std::exception_ptr> errors(kVolumes);
  std::vector<std::thread> threads;
  std::vector<sim::VolumeSpec> specs;
  std::vector<sim::MountExtras> pods;
  for (int i = 0; i < kVolumes; ++i) {
    specs.push_back(c.Volume(c.Unique("vol")));
    pods.push_back(c.Pod("pod"));
  }
  for (int i = 0; i < kVolumes; ++i) {
    threads.emplace_back([&, i] {
      try {
        auto v = c.SetUp(n, specs[i], pods[i]);
        CheckDataRoundTrip(c, v);
        c.tracker().RunNow(v.pod_undo);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  TearDownAll(c);
}

}  // namespace

void AddRobustnessCases(std::vector<Case>& cases) {
  cases.push_back({"robustness/hostile-option-values",
                   {"robustness", "root"},
                   {"F24"},
                   Always,
                   HostileOptionValues});
  cases.push_back({"robustness/prefix-sharing-paths",
                   {"robustness", "root"},
                   {"F25"},
                   Always,
                   PrefixSharingPaths});
  cases.push_back({"robustness/concurrent-volumes",
                   {"robustness", "root"},
                   {"F26"},
                   Always,
                   ConcurrentVolumes});
}

}  // namespace flexkit::conform
