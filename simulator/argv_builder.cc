#include "simulator/argv_builder.h"

#include <stdexcept>

namespace flexkit::sim {

void ArgvBuilder::Require(bool present, const char* verb) const {
  if (!present) {
    throw std::invalid_argument(std::string("verb ") + verb + " does not exist in profile " +
                                profile_->name);
  }
}

Args ArgvBuilder::Init() const { return {"init"}; }

Args ArgvBuilder::GetVolumeName(const std::string& json) const { return {"getvolumename", json}; }

Args ArgvBuilder::Attach(const std::string& json, const std::string& node) const {
  return {"attach", json, node};
}

Args ArgvBuilder::WaitForAttach(const std::string& device, const std::string& json) const {
  return {"waitforattach", device, json};
}

Args ArgvBuilder::IsAttached(const std::string& json, const std::string& node) const {
  return {"isattached", json, node};
}

Args ArgvBuilder::MountDevice(const std::string& path, const std::string& device,
                              const std::string& json) const {
  return {"mountdevice", path, device, json};
}

Args ArgvBuilder::Mount(const std::string& dir, const std::string& json, const std::string&) const {
  return {"mount", dir, json};
}

Args ArgvBuilder::Unmount(const std::string& dir) const { return {"unmount", dir}; }

Args ArgvBuilder::UnmountDevice(const std::string& path) const { return {"unmountdevice", path}; }

Args ArgvBuilder::Detach(const std::string& volume_name_or_device, const std::string& node) const {
  return {"detach", volume_name_or_device, node};
}

Args ArgvBuilder::ExpandVolume(const std::string& json, const std::string& device_mount_path,
                               const std::string& new_size, const std::string& old_size) const {
  Require(profile_->has_expand_verbs, "expandvolume");
  return {"expandvolume", json, device_mount_path, new_size, old_size};
}

Args ArgvBuilder::ExpandFs(const std::string& json, const std::string& device,
                           const std::string& pod_dir, const std::string& new_size,
                           const std::string& old_size) const {
  Require(profile_->has_expand_verbs, "expandfs");
  return {"expandfs", json, device, pod_dir, new_size, old_size};
}

}  // namespace flexkit::sim
