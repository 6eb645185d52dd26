#pragma once
// GoogleMock doubles for the Convoy client and the host seams of the driver.
// The client mocks are for tests about the exact request the driver sends;
// tests of what it does use the stateful daemons of fake_convoy_daemon.h.
#include <gmock/gmock.h>

#include <map>

#include "driver/convoy/clock.h"
#include "driver/convoy/convoy_client.h"
#include "tests/driver/convoy/borrowed_client.h"

namespace convoy_flexvolume {

class MockConvoyClient : public ConvoyClient {
 public:
  explicit MockConvoyClient(std::string socket) : socket_(std::move(socket)) {}
  std::string Endpoint() const override { return "convoy at " + socket_; }
  MOCK_METHOD(VolumeInfo, Create, (const CreateRequest&), (override));
  MOCK_METHOD(std::optional<VolumeInfo>, Inspect, (const std::string&), (override));
  MOCK_METHOD((std::map<std::string, VolumeInfo>), List, (), (override));
  MOCK_METHOD(std::string, Mount, (const MountRequest&), (override));
  MOCK_METHOD(void, Umount, (const std::string&), (override));
  MOCK_METHOD(bool, Delete, (const std::string&, bool), (override));
  MOCK_METHOD(ApiProbe, ProbeApi, (), (override));
  MOCK_METHOD(std::string, DaemonInstance, (), (const, override));

 private:
  std::string socket_;
};

// Hands out one strict mock per socket path, created on first use, so tests
// can set expectations per daemon (per node) before the driver runs.
class MockClientFactory : public ConvoyClientFactory {
 public:
  ::testing::StrictMock<MockConvoyClient>& At(const std::string& socket) {
    auto& slot = clients_[socket];
    if (!slot) slot = std::make_unique<::testing::StrictMock<MockConvoyClient>>(socket);
    return *slot;
  }
  std::unique_ptr<ConvoyClient> ForSocket(const std::string& socket) override {
    requested.push_back(socket);
    return std::make_unique<BorrowedClient>(&At(socket));
  }
  std::vector<std::string> requested;

 private:
  std::map<std::string, std::unique_ptr<::testing::StrictMock<MockConvoyClient>>> clients_;
};

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now; }
  void SleepFor(std::chrono::milliseconds d) override {
    now += d;
    ++sleeps;
  }
  std::chrono::steady_clock::time_point now{};
  int sleeps = 0;
};

}  // namespace convoy_flexvolume
