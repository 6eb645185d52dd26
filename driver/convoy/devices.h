#pragma once
// Whether a volume's device has appeared on this host (waitforattach polls
// it), behind an interface so the wait is testable without block devices.
#include <set>
#include <string>

namespace convoy_flexvolume {

class Devices {
 public:
  virtual ~Devices() = default;
  // `path` is present as a device: a block device (ebs) or a directory (vfs).
  virtual bool Exists(const std::string& path) = 0;
};

class SystemDevices final : public Devices {
 public:
  bool Exists(const std::string& path) override;
};

class FakeDevices final : public Devices {
 public:
  bool Exists(const std::string& path) override { return present.count(path) > 0; }

  std::set<std::string> present;
};

}  // namespace convoy_flexvolume
