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
  // (expandvolume and expandfs before 1.13).
  Args Init() const;
  Args GetVolumeName(const std::string& json) const;
  Args Attach(const std::string& json, const std::string& node) const;
  Args WaitForAttach(const std::string& device, const std::string& json) const;
  Args IsAttached(const std::string& json, const std::string& node) const;
  Args MountDevice(const std::string& path, const std::string& device,
                   const std::string& json) const;
  // mount <dir> <json>. The third argument is ignored (it was 1.5's
  // device); kept so that callers passing it still build.
  Args Mount(const std::string& dir, const std::string& json,
             const std::string& legacy_device = "") const;
  Args Unmount(const std::string& dir) const;
  Args UnmountDevice(const std::string& path) const;
  // detach <volumeName> <node>: the PV or inline volume name.
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
