#pragma once
// A test-side HTTP/1.1 client over a unix socket that sends exact bytes and
// reads the response as it arrived: status line, headers in wire order,
// body de-chunked. Independent of the server's code on purpose.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flexkit::fakes::testing {

struct RawResponse {
  std::string status_line;
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool chunked = false;
  std::optional<std::string> Header(const std::string& name) const;
};

class HttpConnection {
 public:
  explicit HttpConnection(const std::string& socket_path);  // throws when it cannot connect
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  void Send(const std::string& bytes);
  // Reads one response; `head` when it answers a HEAD request (no body).
  RawResponse Read(bool head = false);
  // A request with a JSON body (or none when body is nullopt), then its response.
  RawResponse Request(const std::string& method, const std::string& target,
                      const std::optional<std::string>& body = std::nullopt,
                      const std::string& user_agent = "curl/7.88.1");

 private:
  bool Fill();
  int fd_ = -1;
  std::string buffer_;
};

std::string BuildRequest(const std::string& method, const std::string& target,
                         const std::optional<std::string>& body, const std::string& user_agent);

}  // namespace flexkit::fakes::testing
