#pragma once
// What a FlexVolume options map asks of Convoy, validated: the volume's
// Convoy name, backend, size and filesystem, and how to mount it.
#include <cstdint>
#include <string>

#include "driver/sdk/options.h"

namespace convoy_flexvolume {

// Option keys users set in the PV or inline volume spec.
namespace option {
inline constexpr const char* kConvoyDriver = "convoyDriver";  // "ebs" (default) | "vfs"
inline constexpr const char* kVolumeId = "volumeID";          // an existing EBS volume
inline constexpr const char* kSize = "size";                  // Kubernetes quantity
inline constexpr const char* kVolumeType = "volumeType";      // gp2 | io1 | standard | st1 | sc1
inline constexpr const char* kIops = "iops";
inline constexpr const char* kName = "name";  // Convoy name; default kubernetes.io/pvOrVolumeName
}  // namespace option

struct VolumeSpec {
  std::string name;            // Convoy volume name
  std::string driver = "ebs";  // Convoy driver
  std::string volume_id;       // existing EBS volume, may be empty
  int64_t size_bytes = 0;      // 0: the daemon's default
  std::string volume_type;
  int64_t iops = 0;
  std::string fs_type = "ext4";
  bool fs_type_requested = false;  // kubernetes.io/fsType was set, not defaulted
  bool read_only = false;
};

// Builds the spec from kubelet's options. Invalid input throws
// std::invalid_argument naming the option and what it must be.
VolumeSpec ParseVolumeSpec(const flexvolume::Options& opts);

// A Kubernetes quantity ("1Gi", "500Mi", "1G", "1.5Gi", "1073741824") in
// bytes, rounded up to a whole byte.
bool ParseQuantity(const std::string& text, int64_t* bytes);

}  // namespace convoy_flexvolume
