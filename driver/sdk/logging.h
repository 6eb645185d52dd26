#pragma once
// Driver logging: to a rotating file or to syslog, never to stdout or stderr
// (those carry the reply). Every line is scrubbed of known secrets by the
// sink itself, so no call site can leak one. spdlog stays inside
// logging.cc: its header-only formatting costs every file that includes it
// seconds of compile time.
#include <cstddef>
#include <string>
#include <string_view>

namespace flexvolume {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

struct LogConfig {
  std::string file;  // empty: no file
  bool syslog = false;
  std::string ident = "flexvolume";  // syslog ident and logger name
  size_t max_file_bytes = 10 * 1024 * 1024;
  size_t max_files = 3;
  LogLevel level = LogLevel::kInfo;
};

// Sets where the process logs. The sinks are opened on the first line
// logged, so a call that logs nothing (a quiet `init`) opens no file. Never
// throws and never writes to stdout or stderr: if the file cannot be
// opened, logging goes to syslog (when asked for) or nowhere.
void InitLogging(const LogConfig& config);

// Writes one line; discarded when no destination is set or `level` is
// below the configured one. Never throws.
void LogLine(LogLevel level, std::string_view message);
inline void LogInfo(std::string_view message) { LogLine(LogLevel::kInfo, message); }
inline void LogWarn(std::string_view message) { LogLine(LogLevel::kWarn, message); }

// Writes out what is buffered (before the process replies and exits).
void FlushLog();

}  // namespace flexvolume
