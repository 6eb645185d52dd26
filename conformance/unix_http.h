#pragma once
// One HTTP/1.1 request over a unix socket, for the fake cloud's admin API:
// flexconform asks it for attachments after every step of a sequence, so
// a request is a connect and two writes, not a curl process.
#include <chrono>
#include <string>

namespace flexkit::conform {

struct HttpReply {
  int status = 0;
  std::string body;  // de-chunked
};

// Sends `method path` with `body` (JSON when not empty) and reads the reply
// to its end (the request asks the server to close). Throws
// std::runtime_error naming the socket and what failed: connect, a write or
// read error, a reply that is not HTTP/1.x, or no complete reply within
// `timeout`.
HttpReply UnixHttpRequest(const std::string& socket_path, const std::string& method,
                          const std::string& path, const std::string& body,
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));

// True when a server listens on the socket (a connect succeeds): a socket
// file is bound before its server listens.
bool UnixSocketListening(const std::string& socket_path);

// The body of a raw reply (status line, headers, body), for the parser's
// tests: Content-Length, chunked, or up to the end. Throws when malformed.
HttpReply ParseHttpReply(const std::string& raw);

}  // namespace flexkit::conform
