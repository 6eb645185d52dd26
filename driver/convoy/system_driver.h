#pragma once
// convoy-flexvolume wired to the real system: the config named by
// $CONVOY_FLEXVOLUME_CONFIG (a broken one becomes every verb's Failure),
// log settings from it, Convoy over its unix sockets, mount(2), the
// host's devices and the wall clock. One place for that wiring, so a program that wraps the
// driver (a test mutant) runs exactly what kubelet runs.
#include <string>

#include "driver/convoy/clock.h"
#include "driver/convoy/config.h"
#include "driver/convoy/convoy_driver.h"
#include "driver/convoy/convoy_http_client.h"
#include "driver/convoy/devices.h"
#include "driver/sdk/exec_driver.h"
#include "driver/sdk/mounter.h"

namespace convoy_flexvolume {

struct SystemConvoyDriver {
  // `log_ident`: the name log lines carry (syslog ident).
  explicit SystemConvoyDriver(const std::string& log_ident);

  // Declaration order is construction order: each member uses the ones above.
  std::string config_error;  // empty when the config loaded
  Config config;
  flexvolume::ExecConfig exec;
  ConvoyHttpClientFactory clients;
  flexvolume::SystemMounter mounter;
  SystemClock clock;
  SystemDevices devices;
  ConvoyDriver driver;
};

}  // namespace convoy_flexvolume
