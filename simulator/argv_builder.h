#pragma once
// The argv kubelet and the controller pass for each verb (reference §5, and
// §9 for older shapes), argv[0] excluded. Each JSON is one element; empty
// strings are real empty arguments.
#include <string>
#include <vector>

#include "simulator/version_profile.h"

namespace flexkit::sim {

using Args = std::vector<std::string>;

class ArgvBuilder {
 public:
  explicit ArgvBuilder(const VersionProfile& profile) : profile_(&profile) {}

  // Each throws std::invalid_argument when the profile has no such verb
  // (e.g. waitforattach in legacy-1.5, expandfs before 1.13).
  Args Init() const;
  Args GetVolumeName(const std::string& json) const;
  // legacy-1.5: attach <json> (kubelet, no node name).
  Args Attach(const std::string& json, const std::string& node) const;
  Args WaitForAttach(const std::string& device, const std::string& json) const;
  Args IsAttached(const std::string& json, const std::string& node) const;
  Args MountDevice(const std::string& path, const std::string& device,
                   const std::string& json) const;
  // legacy-1.5: mount <dir> <device> <json>.
  Args Mount(const std::string& dir, const std::string& json,
             const std::string& legacy_device = "") const;
  Args Unmount(const std::string& dir) const;
  Args UnmountDevice(const std::string& path) const;
  // legacy-1.5: detach <device>; later: detach <volumeName> <node>.
  Args Detach(const std::string& volume_name_or_device, const std::string& node) const;
  Args ExpandVolume(const std::string& json, const std::string& device_mount_path,
                    const std::string& new_size, const std::string& old_size) const;
  Args ExpandFs(const std::string& json, const std::string& device, const std::string& pod_dir,
                const std::string& new_size, const std::string& old_size) const;

 private:
  void Require(bool present, const char* verb) const;
  const VersionProfile* profile_;  // a pointer, so a builder can be reassigned
};

}  // namespace flexkit::sim
