// [resize]: node-side expansion as kubelet runs it (protocol §5.11) for
// drivers whose init leaves requiresFSResize true (kubelet's default):
// after the PVC grows, `expandfs <json> <devicePath> <podDir> <new> <old>`
// right after the remount of a recreated pod and online under a running
// one, only for PVs (an inline volume never gets it: NodeExpand answers
// "PersistentVolume not found"). The data written before stays, the
// filesystem grows to the new size (statfs), a repeated call is harmless,
// and Not supported takes kubelet's generic resize. expandvolume is never
// executed by an upstream controller for FlexVolume (the expand controller
// has no flex prober), so it is only called directly and its reply judged.
#include "conformance/catalog.h"
#include "conformance/node_statfs.h"

namespace flexkit::conform {
namespace {

constexpr const char* kGrowRule = "expandfs-grows: expandfs grows the filesystem to the new size";
constexpr const char* kDataRule = "resize-keeps-data: a resize keeps the data";

std::string NeedsFsResize(const DriverProfile& p) {
  if (!p.capabilities || !p.capabilities->requires_fs_resize)
    return "capability: init says requiresFSResize:false (kubelet never calls expandfs)";
  return "";
}

sim::VolumeSpec PersistentVolume(CaseContext& c) {
  auto spec = c.Volume(c.Unique("pv"));
  spec.inline_volume = false;  // expandfs is only sent for PVs
  return spec;
}

std::uint64_t Capacity(CaseContext& c, const PodVolume& v) {
  std::string err;
  auto s = StatFsOnNode(*v.node, v.pod_dir, &err);
  if (!s) c.Fail(kGrowRule, err);
  return s->capacity_bytes;
}

// Grows the mounted volume `v` from its current capacity to twice that, as
// kubelet does once the PVC asks for more, and checks the outcome.
void ExpandAndCheck(CaseContext& c, const PodVolume& v, const std::string& data_file) {
  auto& n = *v.node;
  const std::uint64_t before = Capacity(c, v);
  if (before == 0)
    c.Fail(kGrowRule, "statfs on " + v.pod_dir + " reports a capacity of 0 bytes: nothing to grow");
  const std::uint64_t new_size = ((before * 2 + (1u << 20) - 1) >> 20) << 20;  // whole MiB
  const std::string new_bytes = std::to_string(new_size);
  const std::string old_bytes = std::to_string(before);
  const sim::Step r = c.ops().NodeExpand(n, v.spec, v.device, v.pod_dir, new_bytes, old_bytes);
  std::string fallback;
  if (r.fallback && v.device.empty()) {
    c.Skip(
        "expandfs answered Not supported and the volume has no device, so kubelet's generic "
        "resize cannot run: expanding a PVC of this driver fails (implement expandfs, or report "
        "requiresFSResize:false)");
  } else if (r.fallback) {
    fallback = "kubelet's generic resize of " + v.device +
               (r.ok() ? std::string(": ok") : " failed (" + c.Redact(r.error) + ")");
  } else if (!r.ok()) {
    c.Fail(kGrowRule,
           "expandfs from " + old_bytes + " to " + new_bytes + " bytes failed: " + r.error);
  }
  CheckDataKept(c, v, data_file, "after expandfs", kDataRule);
  const std::uint64_t after = Capacity(c, v);
  const bool grown =
      after > before && static_cast<double>(after) >= new_size * kFsMetadataAllowance;
  const std::string sizes = "statfs capacity " + std::to_string(before) + " -> " +
                            std::to_string(after) + " bytes, asked for " + std::to_string(new_size);
  if (!fallback.empty()) {
    // Not supported is a legal answer; whether the volume then really grew
    // is kubelet's generic resize's doing, so a shortfall only warns.
    if (!grown)
      c.Warn("expandfs answered Not supported and init leaves requiresFSResize true: " + fallback +
             "; " + sizes +
             ". Nothing grows the backing device (upstream never calls expandvolume): implement "
             "expandfs or report requiresFSResize:false");
    return;
  }
  if (!grown) c.Fail(kGrowRule, "expandfs said Success but " + sizes);
  // kubelet repeats the call when it could not record the new size.
  auto again = c.ops().CallExpandFs(n, v.spec, v.device, v.pod_dir, new_bytes, old_bytes);
  if (!again.ok())
    c.Fail("expandfs-idempotent: a repeated expandfs is harmless",
           "the second expandfs to the same size failed: " + again.verdict.error);
  CheckDataKept(c, v, data_file, "after a repeated expandfs", kDataRule);
  const std::uint64_t repeated = Capacity(c, v);
  if (repeated < after)
    c.Fail("expandfs-idempotent: a repeated expandfs is harmless",
           "capacity shrank from " + std::to_string(after) + " to " + std::to_string(repeated) +
               " bytes on the repeated call");
}

// The pod keeps running while its PVC grows (ExpandInUsePersistentVolumes).
void ExpandOnline(CaseContext& c) {
  auto& n = c.node();
  auto v = c.SetUp(n, PersistentVolume(c), c.Pod("pod"));
  CheckDataRoundTrip(c, v, "before-resize.txt");
  ExpandAndCheck(c, v, "before-resize.txt");
  TearDownAll(c);
}

// The pod is deleted, the PVC grows, a new pod mounts the volume: kubelet
// calls expandfs right after that mount. (Whether data outlives the first
// pod is the driver's storage model, checked elsewhere: here the data is
// what the new mount holds when expandfs runs.)
void ExpandDuringMount(CaseContext& c) {
  auto& n = c.node();
  auto spec = PersistentVolume(c);
  c.SetUp(n, spec, c.Pod("pod"));
  TearDownAll(c);
  auto v = c.SetUp(n, spec, c.Pod("pod"));
  CheckDataRoundTrip(c, v, "before-resize.txt");
  ExpandAndCheck(c, v, "before-resize.txt");
  TearDownAll(c);
}

// Only ever a direct call (no upstream controller executes it): its
// per-call findings and a Failure are warnings; a hang still fails.
void ExpandVolumeDirect(CaseContext& c) {
  auto& n = c.node();
  auto spec = PersistentVolume(c);
  const std::string global = c.Paths(n).DeviceMountPath(spec.name);
  auto r = c.beyond_kubelet().CallExpandVolume(n, sim::Component::kKubelet, spec, global,
                                               "2147483648", "1073741824");
  if (!r.ok() && !r.not_supported() && r.verdict.status) {
    c.Warn("expandvolume (never executed by an upstream controller for FlexVolume) failed: " +
           r.verdict.error);
  }
}

}  // namespace

void AddResizeCases(std::vector<Case>& cases) {
  cases.push_back({"resize/expandfs-online", {"resize", "root"}, {}, NeedsFsResize, ExpandOnline});
  cases.push_back(
      {"resize/expandfs-during-mount", {"resize", "root"}, {}, NeedsFsResize, ExpandDuringMount});
  cases.push_back({"resize/expandvolume-direct-call", {"resize"}, {}, Always, ExpandVolumeDirect});
}

}  // namespace flexkit::conform
