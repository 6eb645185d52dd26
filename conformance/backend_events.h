#pragma once
// When things happened in one case, for the sequence diagrams of the HTML
// report: the wall-clock window of every driver call (recorded by
// CallTiming) and every request the backend's servers logged while the
// case ran (convoy-fake's daemons and cloud write one line per request:
// "request start_ms=... duration_ms=... status=... METHOD PATH", from
// fakes/http/unix_server.cc). Times are unix epoch milliseconds.
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace flexkit::conform {

struct CallWindow {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
};

struct BackendEvent {
  std::string server;  // "cloud", or the node whose Convoy daemon served it
  std::int64_t start_ms = 0;
  std::int64_t duration_ms = 0;
  int status = 0;  // HTTP status; 0 when the server dropped the connection
  std::string method;
  std::string path;  // as requested, without the query; redacted
};

struct CaseTimeline {
  std::vector<CallWindow> calls;      // one per call entry of the transcript, in its order
  std::vector<BackendEvent> backend;  // ordered by start
};

// The request lines of one server's log; every other line is skipped.
std::vector<BackendEvent> ParseRequestLog(std::istream& log, const std::string& server);

// Reads the logs (server -> path; a missing log has no events), passes
// every method and path through `redact`, and orders the events by start.
std::vector<BackendEvent> ReadBackendEvents(const std::map<std::string, std::string>& logs,
                                            const std::function<std::string(std::string)>& redact);

}  // namespace flexkit::conform
