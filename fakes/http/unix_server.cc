#include "fakes/http/unix_server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "fakes/common/errors.h"

namespace flexkit::fakes::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

// The minimal SyncReadStream Beast needs, over a connected socket fd.
class FdStream {
 public:
  explicit FdStream(int fd) : fd_(fd) {}
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    ec = {};
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b = *it;
      if (b.size() == 0) continue;
      for (;;) {
        ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
        if (n > 0) return static_cast<size_t>(n);
        if (n == 0) {
          ec = boost::asio::error::eof;
          return 0;
        }
        if (errno == EINTR) continue;
        ec = boost::system::error_code(errno, boost::system::system_category());
        return 0;
      }
    }
    return 0;
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  int fd_;
};

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string HttpDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

// Go's answer to a request it cannot parse: no Date, no length, close.
std::string GoProtocolError(int status, std::string_view detail) {
  std::string text = std::to_string(status) + " " + std::string(ReasonPhrase(status));
  if (!detail.empty()) text += ": " + std::string(detail);
  return "HTTP/1.1 " + text +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + text;
}

bool HasHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), std::string(name).c_str()) == 0) return true;
  }
  return false;
}

// Writes `r` as Go's net/http would. The body is sent from where it lies,
// not copied behind the head: a 4 MB listing is written once.
bool SendResponse(int fd, const Response& r, bool head, bool close) {
  constexpr size_t kGoChunkingThreshold = 2048;  // net/http's bufferBeforeChunkingSize
  std::string out =
      "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(ReasonPhrase(r.status)) + "\r\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
  if (r.add_date) out += "Date: " + HttpDate() + "\r\n";
  bool sniff = !r.body.empty() && !HasHeader(r.headers, "Content-Type");
  bool chunked = !head && r.body.size() >= kGoChunkingThreshold;
  if (chunked) {
    if (sniff) out += "Content-Type: text/plain; charset=utf-8\r\n";
    out += "Transfer-Encoding: chunked\r\n";
  } else {
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    if (sniff) out += "Content-Type: text/plain; charset=utf-8\r\n";
  }
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (head) return SendAll(fd, out);
  if (!chunked) return SendAll(fd, out + r.body);  // small: one write
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", r.body.size());
  out += size;
  return SendAll(fd, out) && SendAll(fd, r.body) && SendAll(fd, "\r\n0\r\n\r\n");
}

Request ToRequest(bhttp::request<bhttp::string_body>& msg) {
  Request req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  std::string_view target = req.target;
  // absolute-form: http://host/path
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.substr(0, scheme.size()) == scheme) {
      auto slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
  }
  auto q = target.find('?');
  req.raw_path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  req.path = PercentDecode(req.raw_path).value_or(req.raw_path);
  for (const auto& field : msg) {
    req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  req.body = std::move(msg.body());
  return req;
}

}  // namespace

struct UnixServer::Connection {
  int fd = -1;
  std::thread thread;
  std::atomic<bool> done{false};
};

UnixServer::UnixServer(ServerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

UnixServer::~UnixServer() { Stop(); }

void UnixServer::Start() {
  const std::string& path = options_.socket_path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() > sizeof(addr.sun_path) - 1) {
    throw std::runtime_error("listen on unix socket " + path + ": path is " +
                             std::to_string(path.size()) + " bytes, the limit is 107");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  std::error_code fs_ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, fs_ec);

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw std::runtime_error("listen on unix socket " + path +
                               ": a file that is not a socket is in the way");
    }
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    int err = errno;
    ::close(probe);
    if (rc == 0) {
      throw std::runtime_error("listen on unix socket " + path +
                               ": a live server is answering on it; stop it first");
    }
    if (err != ECONNREFUSED && err != ENOENT) {
      throw std::runtime_error("listen on unix socket " + path +
                               ": probing the existing socket: " + std::strerror(err));
    }
    ::unlink(path.c_str());  // stale: nobody listens on it
  }

  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0)
    throw std::runtime_error(std::string("socket(AF_UNIX): ") + std::strerror(errno));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path.c_str(), options_.socket_mode) != 0 || ::listen(listen_fd_, SOMAXCONN) != 0) {
    int err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    throw std::runtime_error("listen on unix socket " + path + ": " + std::strerror(err));
  }
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

void UnixServer::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes the blocked accept(2)
  if (accept_thread_.joinable()) accept_thread_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(connections_mutex_);
    connections.swap(connections_);
  }
  for (auto& c : connections) ::shutdown(c->fd, SHUT_RDWR);
  for (auto& c : connections) {
    c->thread.join();
    ::close(c->fd);
  }
  ::close(listen_fd_);
  listen_fd_ = -1;
  ::unlink(options_.socket_path.c_str());
}

void UnixServer::ReapFinished() {
  std::list<std::unique_ptr<Connection>> finished;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->done) {
        finished.push_back(std::move(*it));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : finished) {
    c->thread.join();
    ::close(c->fd);
  }
}

void UnixServer::AcceptLoop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      spdlog::warn("accept on {}: {}", options_.socket_path, std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    ReapFinished();
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    Connection& ref = *connection;
    std::lock_guard lock(connections_mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    connections_.push_back(std::move(connection));
    ref.thread = std::thread([this, &ref] {
      Serve(ref);
      ::shutdown(ref.fd, SHUT_RDWR);  // the peer sees EOF now; the fd is closed when reaped
      ref.done = true;
    });
  }
}

void UnixServer::Serve(Connection& connection) {
  FdStream stream(connection.fd);
  beast::flat_buffer buffer;
  while (!stopping_) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
    parser.body_limit(options_.max_body_bytes);
    boost::system::error_code ec;
    bhttp::read(stream, buffer, parser, ec);
    if (ec) {
      if (ec == bhttp::error::header_limit) {
        SendAll(connection.fd, GoProtocolError(431, ""));
      } else if (ec == bhttp::error::body_limit) {
        SendAll(connection.fd, GoProtocolError(413, ""));
      } else if (ec != bhttp::error::end_of_stream && ec != boost::asio::error::eof &&
                 ec != bhttp::error::partial_message &&
                 ec.category() != boost::system::system_category()) {
        SendAll(connection.fd, GoProtocolError(400, ""));
      }
      return;
    }
    auto& msg = parser.get();
    if (msg.version() >= 11 && msg.find(bhttp::field::host) == msg.end()) {
      SendAll(connection.fd, GoProtocolError(400, "missing required Host header"));
      return;
    }
    bool keep_alive = msg.keep_alive();
    bool head = msg.method() == bhttp::verb::head;
    const auto started = std::chrono::system_clock::now();
    Request request = ToRequest(msg);
    Response response;
    if (request.method == "OPTIONS" && request.target == "*") {
      response.status = 200;  // net/http answers `OPTIONS *` itself
    } else {
      try {
        response = handler_(request);
      } catch (const std::exception& e) {
        spdlog::error("{} {}: handler failed: {}", request.method, request.target, e.what());
        response =
            GoError(500, IsOwnError(e) ? std::string("internal error: ") + e.what() : ReplyText(e));
      }
    }
    // One line per request, for the timelines of flexconform's HTML report
    // (conformance/backend_events.h parses it): start in epoch ms, duration,
    // method, path without the query (bodies and queries are never logged).
    const auto ms = [](auto d) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    spdlog::info("request start_ms={} duration_ms={} status={} {} {}",
                 ms(started.time_since_epoch()), ms(std::chrono::system_clock::now() - started),
                 response.drop_connection ? 0 : response.status, request.method, request.raw_path);
    if (response.drop_connection) return;
    if (!SendResponse(connection.fd, response, head, !keep_alive) || !keep_alive) return;
  }
}

}  // namespace flexkit::fakes::http
