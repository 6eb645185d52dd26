#include "conformance/catalog.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace flexkit::conform {

std::string Always(const DriverProfile&) { return ""; }
std::string AttachableOnly(const DriverProfile& p) {
  return p.attachable() ? "" : "capability: init says attach:false";
}
std::string MountOnly(const DriverProfile& p) {
  return p.attachable() ? "capability: init says attach:true (the attachable lifecycle covers it)"
                        : "";
}

std::string Partitionable(const DriverProfile& p) {
  for (const char* hook : {"partition", "heal"}) {
    if (!FixtureHas(p.fixture, hook))
      return std::string("profile: the fixture has no `") + hook +
             "` hook (a command fixture's fixture." + hook +
             ", or convoy-fake) to cut a node off its backend and back";
  }
  return "";
}

void CheckDataKept(CaseContext& c, const PodVolume& v, const std::string& file,
                   const std::string& when, const std::string& rule) {
  std::string back;
  try {
    back = v.node->filesystem().ReadFile(v.pod_dir + "/" + file);
  } catch (const std::exception& e) {
    c.Fail(rule, "read " + file + " " + when + ": " + e.what());
  }
  if (back != "flexconform " + v.spec.name + "\n")
    c.Fail(rule, file + " read back '" + back + "' " + when);
}

bool WriteGoesThrough(CaseContext& c, sim::Node& n, const std::string& dir) {
  const std::string path = dir + "/must-not-exist";
  try {
    n.filesystem().WriteFile(path, "x");
  } catch (const std::exception&) {
    return false;  // expected: EROFS
  }
  c.RecordCheck(n, "write", path, "the write succeeded (read-only asked)");
  std::error_code ec;
  std::filesystem::remove(CaseContext::HostPath(n, path), ec);
  return true;
}

void CheckDataRoundTrip(CaseContext& c, const PodVolume& v, const std::string& file) {
  const std::string path = v.pod_dir + "/" + file;
  const std::string content = "flexconform " + v.spec.name + "\n";
  try {
    v.node->filesystem().WriteFile(path, content);
  } catch (const std::exception& e) {
    // A filesystem read-only by design (informational files) still serves
    // its pods, so the data checks cannot run, and kubelet requires nothing
    // more; one that cannot even be listed is not mounted usably.
    if (!CaseContext::Listable(*v.node, v.pod_dir))
      c.Fail("volume-usable: a mounted volume is writable through the pod dir",
             std::string("write: ") + e.what());
    c.Skip("capability: the volume is mounted but not writable (" + std::string(e.what()) +
           "), so this case's data checks cannot run");
  }
  std::string back;
  try {
    back = v.node->filesystem().ReadFile(path);
  } catch (const std::exception& e) {
    c.Fail("volume-usable: data written is read back", std::string("read: ") + e.what());
  }
  if (back != content)
    c.Fail("volume-usable: data written is read back", "read back '" + back + "'");
}

const char* const kDataLossRule =
    "data-loss: unmount of a directory that is not mounted leaves its files; "
    "kubelet removes only an empty directory";

namespace {

void RemovePlanted(const PlantedFiles& p) {
  std::error_code ec;
  if (p.node->filesystem().IsMountPoint(p.dir)) return;  // the driver mounted over them
  for (const auto& [path, content] : p.files)
    std::filesystem::remove(CaseContext::HostPath(*p.node, path), ec);
  std::filesystem::remove(CaseContext::HostPath(*p.node, p.dir + "/assets"), ec);
}

}  // namespace

PlantedFiles PlantUserFiles(CaseContext& c, sim::Node& n, const std::string& dir) {
  PlantedFiles p;
  p.node = &n;
  p.dir = dir;
  p.volume_content = c.profile().pod_volume_is_directory &&
                     dir.find("/volumes/" + c.Paths(n).EscapedDriver() + "/") != std::string::npos;
  const std::string tag = c.Unique("user-data");
  p.files = {{dir + "/index.html", "<h1>" + tag + "</h1>\n"},
             {dir + "/.htaccess", "# " + tag + "\n"},
             {dir + "/assets/site.css", "/* " + tag + " */\n"}};
  n.filesystem().MakeDirs(dir + "/assets", 0755);
  for (const auto& [path, content] : p.files) n.filesystem().WriteFile(path, content);
  c.tracker().Push("remove the files planted in " + dir, [p] { RemovePlanted(p); });
  return p;
}

void CheckPlantedFiles(CaseContext& c, const PlantedFiles& p, const std::string& verb) {
  if (p.volume_content) {
    RemovePlanted(p);
    return;
  }
  std::string lost;
  for (const auto& [path, content] : p.files) {
    std::string back;
    try {
      back = p.node->filesystem().ReadFile(path);
    } catch (const std::exception&) {
      lost += (lost.empty() ? "" : ", ") + path + " (gone)";
      continue;
    }
    if (back != content) lost += (lost.empty() ? "" : ", ") + path + " (changed)";
  }
  if (lost.empty() && p.node->filesystem().IsMountPoint(p.dir))
    lost = p.dir + " (a mount now hides the files)";
  RemovePlanted(p);
  if (!lost.empty()) {
    c.Fail(kDataLossRule,
           verb + " " + p.dir + ", which was not mounted and held user files, lost: " + lost);
  }
}

std::optional<PodVolume> SetUpOrRefused(CaseContext& c, sim::Node& n, const sim::VolumeSpec& spec,
                                        const sim::MountExtras& pod, const std::string& what) {
  const std::size_t before = c.transcript().Calls().size();
  const std::size_t findings_before = c.findings().size();
  try {
    return c.SetUp(n, spec, pod);
  } catch (const CaseFailure& e) {
    // The per-call rules (and the canaries) are never an accepted answer.
    static const std::set<std::string> per_call = {"F1",  "F2",  "F3",  "F7", "F16",
                                                   "F17", "F21", "F24", "F27"};
    const auto calls = c.transcript().Calls();
    if (per_call.count(e.rule.substr(0, e.rule.find_first_of(" /"))) || calls.size() == before ||
        calls.back().verdict.outcome != sim::Outcome::kFailure ||
        !calls.back().harness_problem.empty())
      throw;
    c.Withdraw(findings_before, e.rule, e.what());
    c.transcript().AddEvent("the driver refused " + what + " (a well-formed Failure)");
    return std::nullopt;
  }
}

std::vector<std::string> MountHelperDirs(const CaseContext& c) {
  // Drivers are run where they are (CaseContext::CheckedCall), not from a
  // copy in the node's plugin dir.
  return {"/usr/bin", "/bin", "/usr/sbin", "/sbin",
          std::filesystem::path(c.profile().driver).parent_path().string()};
}

void TearDownAll(CaseContext& c) {
  auto errors = c.tracker().UnwindAll();
  if (!errors.empty())
    c.Fail("teardown-succeeds: kubelet's teardown of what the case set up succeeds",
           errors.front());
}

const char* const kLiveNodeTag = "live-node";

const std::set<std::string>& LiveNodeCases() {
  // What touches only the case's own volumes and directories. Left out:
  // whatever crashes or restarts a node (its agent, the node's daemon with
  // it), cuts a node off its backend, or needs the fake Convoy/EBS; the
  // [failover] cases need two nodes, and a live node is one.
  static const std::set<std::string> names = {
      "protocol/init-reply",
      "protocol/unknown-verb-not-supported",
      "protocol/getvolumename-never-fails",
      "protocol/controller-verbs-without-shell-tools",
      "lifecycle/mount-only",
      "lifecycle/attachable",
      "lifecycle/data-persists-across-remount",
      "idempotency/setup-verbs-repeated",
      "idempotency/teardown-verbs-repeated",
      "idempotency/up-down-cycles",
      "teardown/unmount-never-mounted-dir",
      "teardown/unmount-missing-dir",
      "teardown/detach-never-attached",
      "teardown/unmountdevice-never-mounted",
      "teardown/waitforattach-empty-device",
      "readonly/write-fails",
      "readonly/global-path-read-only",
      "fstype/honoured",
      "fstype/never-reformat",
      "fstype/empty-is-kubelet-default",
      "secrets/accepted-and-never-leaked",
      "secrets/invalid-base64-is-failure",
      "robustness/hostile-secret-values",
      "robustness/hostile-free-text-options",
      "robustness/kubelet-root-with-space",
      "robustness/prefix-sharing-paths",
      "robustness/concurrent-volumes",
      "install/hot-install-during-probe",
      "drift/lifecycle-per-kubelet-release",
      "drift/fsgroup-key-per-kubelet-release",
      "resize/expandfs-online",
      "resize/expandfs-during-mount",
      "resize/expandvolume-direct-call",
      "metrics/statfs-reports-the-volume",
      "selinux/relabel-needs-labels",
      "failure/mount-onto-regular-file",
      "failure/mount-parent-missing",
      "failure/mount-read-only-parent",
      "failure/mountdevice-missing-device",
      "failure/invalid-option-refused",
      "failure/unmount-busy",
      "failure/unmountdevice-busy",
      "sequence/exhaustive",
      "sequence/random",
  };
  return names;
}

void SkipCasesUnsafeOnALiveNode(DriverProfile& profile, const std::vector<const Case*>& cases) {
  if (profile.live_node_scratch.empty()) return;
  for (const auto* c : cases) {
    const bool safe = std::find(c->tags.begin(), c->tags.end(), kLiveNodeTag) != c->tags.end();
    if (!safe && !profile.skip.count(c->name))
      profile.skip[c->name] =
          "liveNode: not safe on a live node (only [live-node] cases run there)";
  }
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
  AddFailurePathCases(cases);
  AddFailoverCases(cases);
  AddRestartCases(cases);
  AddSequenceCases(cases, options.sequence);
  for (auto& c : cases) {
    if (LiveNodeCases().count(c.name)) c.tags.push_back(kLiveNodeTag);
  }
  return cases;
}

}  // namespace flexkit::conform
