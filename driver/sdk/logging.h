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

// Sets where the process logs. The sinks are opened on the first Log() call,
// so a call that logs nothing (a quiet `init`) opens no file. Never throws
// and never writes to stdout or stderr: if the file cannot be opened, logging
// goes to syslog (when asked for) or nowhere.
void InitLogging(const LogConfig& config);

// The process logger; discards everything when no destination is set.
spdlog::logger& Log();

}  // namespace flexvolume
