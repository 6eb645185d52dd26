#pragma once
// kubelet's paths for a FlexVolume driver (reference §6), under one kubelet
// root dir.
#include <string>

#include "simulator/plugin_name.h"

namespace flexkit::sim {

class KubeletPaths {
 public:
  KubeletPaths(std::string kubelet_root, std::string driver_name)
      : root_(std::move(kubelet_root)), driver_(std::move(driver_name)) {}

  // <root>/plugins/kubernetes.io/flexvolume/<vendor>/<driver>/mounts/<vol>:
  // the driver name keeps its '/'.
  std::string DeviceMountPath(const std::string& volume_name) const {
    return root_ + "/plugins/kubernetes.io/flexvolume/" + driver_ + "/mounts/" + volume_name;
  }
  // <root>/pods/<uid>/volumes/<vendor~driver>/<vol>: '/' escaped as '~'.
  std::string PodVolumeDir(const std::string& pod_uid, const std::string& volume_name) const {
    return PodVolumesDir(pod_uid) + "/" + EscapedDriver() + "/" + volume_name;
  }
  std::string PodVolumesDir(const std::string& pod_uid) const {
    return root_ + "/pods/" + pod_uid + "/volumes";
  }
  std::string EscapedDriver() const { return EscapeDriverName(driver_); }

 private:
  std::string root_;
  std::string driver_;
};

}  // namespace flexkit::sim
