#pragma once
// Driver logging: to a rotating file or to syslog, never to stdout or stderr
// (those carry the reply). Every line is scrubbed of known secrets by the
// sink itself, so no call site can leak one.
#include <spdlog/logger.h>

#include <cstddef>
#include <memory>
#include <string>

namespace flexvolume {

struct LogConfig {
  std::string file;  // empty: no file
  bool syslog = false;
  std::string ident = "flexvolume";  // syslog ident and logger name
  size_t max_file_bytes = 10 * 1024 * 1024;
  size_t max_files = 3;
  spdlog::level::level_enum level = spdlog::level::info;
};

// Replaces the process logger. Never throws and never writes to stdout or
// stderr: if the file cannot be opened, logging goes to syslog (when asked
// for) or nowhere, and LastLogError() says why.
void InitLogging(const LogConfig& config);

// The process logger; discards everything until InitLogging succeeds.
spdlog::logger& Log();

// Why the last InitLogging could not open its file ("" if it could).
std::string LastLogError();

}  // namespace flexvolume
