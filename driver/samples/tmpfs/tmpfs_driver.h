#pragma once
// flexkit-tmpfs: a correct non-attachable FlexVolume driver (attach:false)
// that gives each pod volume its own tmpfs. The known-good baseline the
// simulator and the conformance suite are tested with.
//
// Options: `size` (tmpfs size: digits with an optional k/m/g suffix),
// kubernetes.io/readwrite=ro for a read-only mount. A resized PV grows in
// place: `expandfs` remounts the tmpfs with the new size.
#include "driver/sdk/driver.h"
#include "driver/sdk/mounter.h"

namespace flexkit::tmpfs {

// The mount source that marks our mounts in mountinfo.
inline constexpr const char* kMountSource = "flexkit-tmpfs";

class TmpfsDriver final : public flexvolume::Driver {
 public:
  explicit TmpfsDriver(flexvolume::Mounter& mounter) : mounter_(mounter) {}

  flexvolume::DriverStatus Init() override;
  // Ensures a tmpfs is mounted at `dir`: Success when ours already is.
  flexvolume::DriverStatus Mount(const std::string& dir, const flexvolume::Options& opts) override;
  // Ensures nothing of ours is mounted at `dir`: Success when the directory
  // is missing or not mounted.
  flexvolume::DriverStatus Unmount(const std::string& dir) override;
  // Remounts our tmpfs at `pod_volume_dir` with size `new_size` bytes,
  // keeping it read-only if it was; the data stays, and a repeated call
  // changes nothing.
  flexvolume::DriverStatus ExpandFs(const flexvolume::Options& opts, const std::string& device,
                                    const std::string& pod_volume_dir, uint64_t new_size,
                                    uint64_t old_size) override;

 private:
  flexvolume::Mounter& mounter_;
};

}  // namespace flexkit::tmpfs
