#include "driver/sdk/logging.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/syslog_sink.h>
#include <syslog.h>

#include <mutex>
#include <optional>
#include <vector>

#include "driver/sdk/secrets.h"

namespace flexvolume {
namespace {

// Forwards every message to `inner` with known secrets replaced.
class RedactingSink final : public spdlog::sinks::sink {
 public:
  explicit RedactingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    std::string text =
        SecretRegistry::Global().Redact(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = text;
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr inner_;
};

std::mutex g_mu;
std::optional<LogConfig> g_pending;        // set by InitLogging, opened by Logger()
std::shared_ptr<spdlog::logger> g_logger;  // guarded by g_mu
// Replaced loggers stay alive: Logger() hands out references.
std::vector<std::shared_ptr<spdlog::logger>> g_retired;

spdlog::level::level_enum SpdlogLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("flexvolume",
                                          std::make_shared<spdlog::sinks::null_sink_mt>());
}

// Builds the logger for `config`. A file that cannot be opened is left
// out: the call's reply matters more than its log.
std::shared_ptr<spdlog::logger> OpenLogger(const LogConfig& config) {
  std::vector<spdlog::sink_ptr> sinks;
  if (!config.file.empty()) {
    try {
      sinks.push_back(
          std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
              config.file, config.max_file_bytes, config.max_files)));
    } catch (const std::exception&) {
    }
  }
  if (config.syslog) {
    sinks.push_back(std::make_shared<RedactingSink>(
        std::make_shared<spdlog::sinks::syslog_sink_mt>(config.ident, LOG_PID, LOG_DAEMON, false)));
  }
  auto logger = sinks.empty()
                    ? NullLogger()
                    : std::make_shared<spdlog::logger>(config.ident, sinks.begin(), sinks.end());
  logger->set_level(SpdlogLevel(config.level));
  logger->flush_on(spdlog::level::info);
  // spdlog's default error handler prints to stderr, which is protocol.
  logger->set_error_handler([](const std::string&) {});
  return logger;
}

// The process logger; discards everything when no destination is set.
spdlog::logger& Logger() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_logger) {
    if (g_pending) {
      g_logger = OpenLogger(*g_pending);
      g_pending.reset();
    } else {
      g_logger = NullLogger();
    }
  }
  return *g_logger;
}

}  // namespace

void InitLogging(const LogConfig& config) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_logger) g_retired.push_back(std::move(g_logger));
  g_pending = config;
}

void LogLine(LogLevel level, std::string_view message) {
  // The message is logged as it is, never read as a format string.
  Logger().log(SpdlogLevel(level), "{}", message);
}

void FlushLog() { Logger().flush(); }

}  // namespace flexvolume
