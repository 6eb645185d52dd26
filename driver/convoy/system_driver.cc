#include "driver/convoy/system_driver.h"

namespace convoy_flexvolume {
namespace {

Config LoadedConfig(std::string* error) {
  Config config;
  LoadConfig(ConfigPath(), &config, error);
  return config;
}

flexvolume::ExecConfig ExecFor(const std::string& log_ident, const Config& config) {
  flexvolume::ExecConfig exec;
  exec.log.ident = log_ident;
  exec.log.file = config.log_file;
  exec.log.syslog = config.log_file.empty();
  return exec;
}

}  // namespace

SystemConvoyDriver::SystemConvoyDriver(const std::string& log_ident)
    : config(LoadedConfig(&config_error)),
      exec(ExecFor(log_ident, config)),
      clients(config.timeouts.connect, config.timeouts.request),
      driver(config, config_error, DriverDeps{&clients, &mounter, &clock, &DeviceExists}) {}

}  // namespace convoy_flexvolume
