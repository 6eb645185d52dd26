#include "driver/sdk/driver.h"

namespace flexvolume {

DriverStatus Driver::GetVolumeName(const Options&) { return NotSupported(); }
DriverStatus Driver::Attach(const Options&, const std::string&) { return NotSupported(); }
DriverStatus Driver::Detach(const std::string&, const std::string&) { return NotSupported(); }
DriverStatus Driver::WaitForAttach(const std::string&, const Options&) { return NotSupported(); }
DriverStatus Driver::IsAttached(const Options&, const std::string&) { return NotSupported(); }
DriverStatus Driver::MountDevice(const std::string&, const std::string&, const Options&) {
  return NotSupported();
}
DriverStatus Driver::UnmountDevice(const std::string&) { return NotSupported(); }
DriverStatus Driver::Mount(const std::string&, const Options&) { return NotSupported(); }
DriverStatus Driver::Unmount(const std::string&) { return NotSupported(); }
DriverStatus Driver::ExpandVolume(const Options&, const std::string&, uint64_t, uint64_t) {
  return NotSupported();
}
DriverStatus Driver::ExpandFs(const Options&, const std::string&, const std::string&, uint64_t,
                              uint64_t) {
  return NotSupported();
}

}  // namespace flexvolume
