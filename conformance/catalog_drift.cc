// [drift]: kubelet's calling convention changed across releases (protocol
// §9): the fsGroup key was renamed in 1.15 (F22), the plugin name prefix
// and Go's JSON escapes changed later, and argv shapes changed before 1.7
// (F23). Drivers outlive the kubelet they were written against, so these
// cases run the whole lifecycle as each kubelet since 1.7 calls it.
// Older shapes (legacy-1.5, 1.6) treat every driver as attachable and are
// not run here; `flexsim --kubernetes` drives them.
#include <sys/mount.h>

#include <string>
#include <vector>

#include "conformance/catalog.h"

namespace flexkit::conform {
namespace {

// Releases whose calling convention is today's (§9), oldest first.
const std::vector<std::string> kModernKubelets = {"1.7", "1.15", "current"};

void LifecyclePerKubelet(CaseContext& c) {
  auto& n = c.node();
  for (const auto& kubernetes : kModernKubelets) {
    c.UseKubernetes(kubernetes);
    auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
    try {
      CheckDataRoundTrip(c, v);
    } catch (const CaseFailure& f) {
      throw CaseFailure("F23 argv-positions: every kubelet since 1.7 is served",
                        "as kubelet " + kubernetes + " calls it: " + f.what());
    }
    TearDownAll(c);
  }
}

// fsGroup reaches mount as `kubernetes.io/fsGroup` (1.7-1.14) or
// `kubernetes.io/mounterArgs.FsGroup` (1.15+). With the fsGroup
// capability, kubelet changes the ownership itself after mount; without
// it, that is the driver's job, under either spelling.
void FsGroupPerKubelet(CaseContext& c) {
  auto& n = c.node();
  const bool kubelet_applies = !c.profile().capabilities || c.profile().capabilities->fs_group;
  long gid = 4242;
  for (const auto& kubernetes : {std::string("1.7"), std::string("current")}) {
    c.UseKubernetes(kubernetes);
    const std::string key = c.version().fs_group_key;
    auto pod = c.Pod("pod");
    pod.fs_group = ++gid;
    // With the capability, SetUp changes the ownership as kubelet does,
    // ignoring its error: the pod starts with the volume as the driver left it.
    auto v = c.SetUp(n, c.Volume(c.Unique("vol")), pod);
    const bool ownership_failed = !v.ownership_error.empty();
    if (ownership_failed) {
      c.Warn(
          "the driver leaves fsGroup to kubelet (fsGroup:true), but kubelet's ownership "
          "change failed on the mounted volume (kubelet ignores that): " +
          v.ownership_error);
    }
    const long group = n.filesystem().GroupOf(v.pod_dir);
    if (!ownership_failed && group != gid) {
      c.Fail("F22 fsgroup-key: each release's fsGroup key is applied",
             "as kubelet " + kubernetes + " (fsGroup sent as \"" + key + "\": \"" +
                 std::to_string(gid) + "\"), the volume root is owned by group " +
                 std::to_string(group) +
                 (kubelet_applies ? "" : "; with fsGroup:false the driver must apply it"));
    }
    CheckDataRoundTrip(c, v);
    TearDownAll(c);
  }
}

}  // namespace

void AddDriftCases(std::vector<Case>& cases) {
  cases.push_back({"drift/lifecycle-per-kubelet-release",
                   {"drift", "root"},
                   {"F23"},
                   Always,
                   LifecyclePerKubelet});
  cases.push_back({"drift/fsgroup-key-per-kubelet-release",
                   {"drift", "root"},
                   {"F22"},
                   Always,
                   FsGroupPerKubelet});
}

}  // namespace flexkit::conform
