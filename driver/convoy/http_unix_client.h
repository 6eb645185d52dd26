#pragma once
// One HTTP/1.1 request over a unix socket (Boost.Beast), bounded in time:
// connecting by the connect timeout, writing and reading the whole reply by
// the request timeout. A fresh connection per request, as a short-lived
// driver process makes few.
#include <chrono>
#include <stdexcept>
#include <string>

namespace convoy_flexvolume {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

// No reply: the socket is missing or refuses, the deadline passed, or what
// came back is not HTTP. what() says which, without the socket path (the
// caller adds it).
class HttpTransportError : public std::runtime_error {
 public:
  enum class Kind { kConnect, kTimeout, kProtocol };
  HttpTransportError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class HttpUnixClient {
 public:
  HttpUnixClient(std::string socket_path, std::chrono::milliseconds connect_timeout,
                 std::chrono::milliseconds request_timeout);

  // Sends `method target` with `body` as application/json and the Convoy
  // client User-Agent. Throws HttpTransportError.
  HttpReply Request(const std::string& method, const std::string& target, const std::string& body);

  const std::string& socket_path() const { return socket_path_; }

 private:
  std::string socket_path_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds request_timeout_;
};

}  // namespace convoy_flexvolume
