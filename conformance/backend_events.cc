#include "conformance/backend_events.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace flexkit::conform {
namespace {

// The number after `key=` in `line`, or false when absent or malformed.
bool Field(const std::string& line, const std::string& key, std::int64_t& value) {
  const std::string tag = " " + key + "=";
  const auto pos = line.find(tag);
  if (pos == std::string::npos) return false;
  const char* begin = line.data() + pos + tag.size();
  const char* end = line.data() + line.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  return ec == std::errc() && ptr != begin;
}

}  // namespace

std::vector<BackendEvent> ParseRequestLog(std::istream& log, const std::string& server) {
  std::vector<BackendEvent> events;
  std::string line;
  while (std::getline(log, line)) {
    const auto marker = line.find("] request start_ms=");
    if (marker == std::string::npos) continue;
    const std::string rest = line.substr(marker + 1);  // " request start_ms=..."
    BackendEvent e;
    e.server = server;
    std::int64_t status = 0;
    if (!Field(rest, "start_ms", e.start_ms) || !Field(rest, "duration_ms", e.duration_ms) ||
        !Field(rest, "status", status))
      continue;
    e.status = static_cast<int>(status);
    // The last two words: METHOD PATH (neither holds a space in HTTP/1.1).
    std::istringstream words(rest.substr(rest.find(" status=") + 1));
    std::string status_word;
    if (!(words >> status_word >> e.method >> e.path)) continue;
    events.push_back(std::move(e));
  }
  return events;
}

std::vector<BackendEvent> ReadBackendEvents(const std::map<std::string, std::string>& logs,
                                            const std::function<std::string(std::string)>& redact) {
  std::vector<BackendEvent> all;
  for (const auto& [server, path] : logs) {
    std::ifstream in(path);
    if (!in) continue;
    for (auto& e : ParseRequestLog(in, server)) {
      e.method = redact(std::move(e.method));
      e.path = redact(std::move(e.path));
      all.push_back(std::move(e));
    }
  }
  // Within one millisecond, the longer request first: it is the one that
  // encloses the other (a daemon's request and the cloud calls it makes).
  std::stable_sort(all.begin(), all.end(), [](const BackendEvent& a, const BackendEvent& b) {
    if (a.start_ms != b.start_ms) return a.start_ms < b.start_ms;
    return a.duration_ms > b.duration_ms;
  });
  return all;
}

}  // namespace flexkit::conform
