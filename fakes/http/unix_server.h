#pragma once
// An HTTP/1.1 server on a unix socket, written after Go's net/http where the
// Convoy recording shows it matters: Go's own 400/431 answers, `OPTIONS *`,
// HEAD, Content-Length for bodies under 2048 bytes and chunked above.
//
// One thread per connection: handlers may do slow work (mkfs, waiting on the
// cloud) without holding up other clients, and there is no global lock.
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fakes/http/message.h"

namespace flexkit::fakes::http {

using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  std::string socket_path;
  unsigned socket_mode = 0600;
  size_t max_body_bytes = 16u << 20;            // larger bodies get 413, unread
  size_t max_header_bytes = (1u << 20) + 4096;  // Go's default limit, then 431
};

class UnixServer {
 public:
  UnixServer(ServerOptions options, Handler handler);
  ~UnixServer();
  UnixServer(const UnixServer&) = delete;
  UnixServer& operator=(const UnixServer&) = delete;

  // Binds and listens (backlog SOMAXCONN). A stale socket file is replaced;
  // a socket a live server answers on, a path of more than 107 bytes, or a
  // non-socket file in the way is an error (std::runtime_error, with why).
  void Start();
  // Stops accepting, closes every connection and joins their threads, then
  // removes the socket file.
  void Stop();

 private:
  struct Connection;
  void AcceptLoop();
  void Serve(Connection& connection);
  void ReapFinished();

  ServerOptions options_;
  Handler handler_;
  int listen_fd_ = -1;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};
  std::mutex connections_mutex_;
  std::list<std::unique_ptr<Connection>> connections_;
};

}  // namespace flexkit::fakes::http
