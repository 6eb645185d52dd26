#pragma once
// A GoogleMock Driver for dispatch tests.
#include <gmock/gmock.h>

#include "driver/sdk/driver.h"

namespace flexvolume {

class MockDriver : public Driver {
 public:
  MOCK_METHOD(DriverStatus, Init, (), (override));
  MOCK_METHOD(DriverStatus, GetVolumeName, (const Options&), (override));
  MOCK_METHOD(DriverStatus, Attach, (const Options&, const std::string&), (override));
  MOCK_METHOD(DriverStatus, Detach, (const std::string&, const std::string&), (override));
  MOCK_METHOD(DriverStatus, WaitForAttach, (const std::string&, const Options&), (override));
  MOCK_METHOD(DriverStatus, IsAttached, (const Options&, const std::string&), (override));
  MOCK_METHOD(DriverStatus, MountDevice, (const std::string&, const std::string&, const Options&),
              (override));
  MOCK_METHOD(DriverStatus, UnmountDevice, (const std::string&), (override));
  MOCK_METHOD(DriverStatus, Mount, (const std::string&, const Options&), (override));
  MOCK_METHOD(DriverStatus, Unmount, (const std::string&), (override));
  MOCK_METHOD(DriverStatus, ExpandVolume, (const Options&, const std::string&, uint64_t, uint64_t),
              (override));
  MOCK_METHOD(DriverStatus, ExpandFs,
              (const Options&, const std::string&, const std::string&, uint64_t, uint64_t),
              (override));
};

}  // namespace flexvolume
