#pragma once
// One HTTP/1.1 request over a unix socket, and the one reading of an HTTP
// reply (Content-Length, chunked, or to the end): the fake daemon's calls
// to the fake cloud, and flexconform's to the cloud's admin API after every
// step of a sequence (so a request is a connect and two writes, not a curl
// process).
#include <chrono>
#include <stdexcept>
#include <string>

namespace flexkit::platform {

struct HttpReply {
  int status = 0;
  std::string body;  // de-chunked
};

// Why a request got no reply: what() names the request and the socket,
// reason() only what failed (e.g. "connect: No such file or directory").
class UnixHttpError : public std::runtime_error {
 public:
  UnixHttpError(const std::string& where, std::string reason)
      : std::runtime_error(where + ": " + reason), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Sends `method path` with `body` (JSON when not empty) and reads the reply
// to its end (the request asks the server to close). Throws UnixHttpError:
// connect, a write or read error, a reply that is not HTTP/1.x, or no
// complete reply within `timeout`.
HttpReply UnixHttpRequest(const std::string& socket_path, const std::string& method,
                          const std::string& path, const std::string& body,
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));

// True when a server listens on the socket (a connect succeeds): a socket
// file is bound before its server listens.
bool UnixSocketListening(const std::string& socket_path);

// The body of a raw reply (status line, headers, body), for the parser's
// tests: Content-Length, chunked, or up to the end. Throws when malformed.
HttpReply ParseHttpReply(const std::string& raw);

}  // namespace flexkit::platform
