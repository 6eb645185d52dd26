// [metrics]: for `supportsMetrics: true`, kubelet's metrics provider
// (MetricsStatFS on the pod volume dir, protocol §3.3) must read the
// volume's own filesystem: a mount of its own at the pod dir, with
// capacity for what was asked and inodes, after the first mount and after
// a remount. [selinux]: `selinuxRelabel: true` (kubelet's default) on a
// filesystem that cannot hold security labels makes every container of an
// SELinux pod fail to start (cluster-facts §4).
#include <sys/xattr.h>

#include <cerrno>
#include <cstring>

#include "conformance/catalog.h"
#include "conformance/node_statfs.h"
#include "simulator/mount_table.h"

namespace flexkit::conform {
namespace {

constexpr const char* kMetricsRule =
    "metrics-statfs: supportsMetrics means statfs on the pod dir reports the volume";

std::string NeedsMetrics(const DriverProfile& p) {
  if (!p.capabilities || !p.capabilities->supports_metrics)
    return "capability: init says supportsMetrics:false (kubelet reports no volume metrics)";
  return "";
}

std::string NeedsSelinuxRelabel(const DriverProfile& p) {
  if (!p.capabilities || !p.capabilities->selinux_relabel)
    return "capability: init says selinuxRelabel:false (the runtime does not relabel)";
  return "";
}

void CheckMetrics(CaseContext& c, const PodVolume& v, const std::string& when) {
  auto& n = *v.node;
  // statfs reports the volume exactly when the pod dir is the volume: a
  // mount there (even a bind of a directory on the node's own disk, which
  // truly holds the volume's data), or a directory volume's own dir.
  // Without either, statfs reads whatever filesystem kubelet's dir is on.
  if (!c.PodVolumeSetUp(n, v.pod_dir))
    c.Fail(kMetricsRule, "nothing is mounted at the pod dir " + when +
                             ": statfs would report the filesystem of kubelet's dir, not the "
                             "volume");
  std::string err;
  auto volume = StatFsOnNode(n, v.pod_dir, &err);
  if (!volume) c.Fail(kMetricsRule, err + " " + when);
  if (volume->capacity_bytes == 0 || volume->inodes == 0)
    c.Fail(kMetricsRule, "statfs " + when + " reports capacity " +
                             std::to_string(volume->capacity_bytes) + " bytes and " +
                             std::to_string(volume->inodes) + " inodes");
  const auto size = c.profile().volume_options.find("size");
  if (size == c.profile().volume_options.end()) return;
  const auto asked = ParseSizeOption(size->second);
  if (asked && static_cast<double>(volume->capacity_bytes) < *asked * kFsMetadataAllowance)
    c.Fail(kMetricsRule, "statfs " + when + " reports " + std::to_string(volume->capacity_bytes) +
                             " bytes for a volume of size " + size->second);
}

void MetricsAfterMountAndRemount(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckMetrics(c, v, "after mount");
  TearDownAll(c);
  auto again = c.SetUp(n, spec, c.Pod("pod"));
  CheckMetrics(c, again, "after a remount");
  TearDownAll(c);
}

// Whether the filesystem at `path` (in the node's namespace) takes a
// security.* extended attribute, as SELinux labelling needs. A root
// process may set security.* labels only where the filesystem has a
// handler for them; ENOTSUP (EOPNOTSUPP) means it has none.
bool HoldsSecurityLabels(const sim::Node& n, const std::string& path, std::string* why) {
  const std::string seen = "/proc/" + std::to_string(n.holder_pid()) + "/root" + path;
  const char* name = "security.flexconform";
  if (::setxattr(seen.c_str(), name, "1", 1, 0) == 0) {
    ::removexattr(seen.c_str(), name);
    return true;
  }
  const int e = errno;
  *why = std::strerror(e);
  return e != ENOTSUP;
}

void SelinuxLabelsHold(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), c.Pod("pod"));
  std::string why;
  if (!HoldsSecurityLabels(n, v.pod_dir, &why)) {
    std::string fs;
    const auto table = n.Mounts();
    for (const auto& m : *table)
      if (m.target == v.pod_dir) fs = m.fs_type;
    c.Warn("init leaves selinuxRelabel true, but the volume's filesystem (" +
           (fs.empty() ? std::string("unknown type") : fs) + ") cannot hold security labels (" +
           why +
           "): on an SELinux host every container of a pod with an SELinux context fails to "
           "start. Report selinuxRelabel:false for such filesystems");
  }
  TearDownAll(c);
}

}  // namespace

void AddMetricsCases(std::vector<Case>& cases) {
  cases.push_back({"metrics/statfs-reports-the-volume",
                   {"metrics", "root"},
                   {},
                   NeedsMetrics,
                   MetricsAfterMountAndRemount});
  cases.push_back({"selinux/relabel-needs-labels",
                   {"selinux", "root"},
                   {},
                   NeedsSelinuxRelabel,
                   SelinuxLabelsHold});
}

}  // namespace flexkit::conform
