#pragma once
// The HTTP request and response as the fakes' handlers see them. The server
// (unix_server.h) owns the wire format, so handlers only decide status,
// headers and body, as a Go net/http handler does.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flexkit::fakes::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;
  std::string target;    // the request-target exactly as sent (RequestURI)
  std::string path;      // the path of the target, percent-decoded
  std::string raw_path;  // the path of the target as sent
  std::string query;     // after '?', without it; empty when absent
  HeaderList headers;
  std::string body;

  // Value of the first header with this name (case-insensitive), if any.
  std::optional<std::string> Header(std::string_view name) const;
  // Value of a query parameter (first occurrence, percent-decoded), if any.
  std::optional<std::string> QueryParam(std::string_view name) const;
};

struct Response {
  int status = 200;
  // Headers set by the handler, written first and in this order. The server
  // then adds Date, the framing (Content-Length or chunked) and, for a
  // non-empty body without a Content-Type, Go's sniffed text/plain type.
  HeaderList headers;
  std::string body;
  bool add_date = true;
  bool drop_connection = false;  // close without answering (fault injection)
};

// Go's http.Error: body `message + "\n"`, text/plain, nosniff.
Response GoError(int status, std::string_view message);
// A 200 body that Go would sniff as text/plain (JSON and plain text alike).
Response GoText(std::string body, int status = 200);
// Percent-decodes a path; nullopt on a malformed escape.
std::optional<std::string> PercentDecode(std::string_view s);
// Standard reason phrase of a status code.
std::string_view ReasonPhrase(int status);

}  // namespace flexkit::fakes::http
