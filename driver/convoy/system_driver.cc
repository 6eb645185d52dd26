#include "driver/convoy/system_driver.h"

#include <stdexcept>

namespace convoy_flexvolume {
namespace {

// The config in effect; one that cannot be loaded leaves the defaults and
// its error, which every verb then answers.
Config LoadedConfig(std::string* error) {
  try {
    const ConfigLocation where = ConfigPath();
    return LoadConfig(where.path, where.named);
  } catch (const std::runtime_error& e) {
    *error = e.what();
    return Config{};
  }
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
      driver(config, config_error, DriverDeps{&clients, &mounter, &clock, &devices}) {}

}  // namespace convoy_flexvolume
