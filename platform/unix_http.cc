#include "platform/unix_http.h"

#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "platform/unique_fd.h"

namespace flexkit::platform {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool WaitFor(int fd, short events, Clock::time_point deadline, const std::string& where) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR)
      throw UnixHttpError(where, std::string("poll: ") + strerror(errno));
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A chunk-size line: hex digits, then perhaps ";extensions".
std::size_t ParseChunkSize(const std::string& line) {
  std::size_t value = 0;
  std::size_t i = 0;
  for (; i < line.size() && HexDigit(line[i]) >= 0; ++i) {
    if (value > (SIZE_MAX >> 4)) throw std::runtime_error("chunk size too large: " + line);
    value = value * 16 + static_cast<std::size_t>(HexDigit(line[i]));
  }
  if (i == 0 || (i < line.size() && line[i] != ';'))
    throw std::runtime_error("bad chunk size line: " + line);
  return value;
}

std::string Dechunk(const std::string& raw) {
  std::string body;
  std::size_t at = 0;
  for (;;) {
    const std::size_t eol = raw.find("\r\n", at);
    if (eol == std::string::npos) throw std::runtime_error("chunked body ends early");
    const std::size_t size = ParseChunkSize(raw.substr(at, eol - at));
    at = eol + 2;
    if (size == 0) return body;
    if (raw.size() < at + size + 2) throw std::runtime_error("chunked body ends early");
    body.append(raw, at, size);
    at += size + 2;
  }
}

}  // namespace

HttpReply ParseHttpReply(const std::string& raw) {
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (raw.compare(0, 7, "HTTP/1.") != 0 || head_end == std::string::npos || raw.size() < 12)
    throw std::runtime_error("not an HTTP/1.x reply: " + raw.substr(0, 80));
  HttpReply reply;
  try {
    reply.status = std::stoi(raw.substr(9, 3));
  } catch (const std::exception&) {
    throw std::runtime_error("bad HTTP status line: " + raw.substr(0, raw.find("\r\n")));
  }
  bool chunked = false;
  long long length = -1;
  std::size_t at = raw.find("\r\n") + 2;
  while (at < head_end) {
    const std::size_t eol = raw.find("\r\n", at);
    const std::string line = raw.substr(at, eol - at);
    at = eol + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (strcasecmp(name.c_str(), "Transfer-Encoding") == 0) {
      chunked = strcasecmp(value.c_str(), "chunked") == 0;
    } else if (strcasecmp(name.c_str(), "Content-Length") == 0) {
      length = std::stoll(value);
    }
  }
  const std::string rest = raw.substr(head_end + 4);
  if (chunked) {
    reply.body = Dechunk(rest);
  } else if (length >= 0) {
    if (rest.size() < static_cast<std::size_t>(length))
      throw std::runtime_error("reply body ends early: " + std::to_string(rest.size()) + " of " +
                               std::to_string(length) + " bytes");
    reply.body = rest.substr(0, static_cast<std::size_t>(length));
  } else {
    reply.body = rest;
  }
  return reply;
}

bool UnixSocketListening(const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return fd.get() >= 0 &&
         ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

HttpReply UnixHttpRequest(const std::string& socket_path, const std::string& method,
                          const std::string& path, const std::string& body,
                          std::chrono::milliseconds timeout) {
  const std::string where = method + " " + path + " on " + socket_path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path)
    throw UnixHttpError(where, "socket path too long");
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) throw UnixHttpError(where, std::string("socket: ") + strerror(errno));
  const auto deadline = Clock::now() + timeout;
  // A unix socket's connect does not complete later: EAGAIN means the
  // server's backlog is full, so try again until the deadline.
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == EINTR) continue;
    if (errno != EAGAIN) throw UnixHttpError(where, std::string("connect: ") + strerror(errno));
    if (Clock::now() >= deadline) throw UnixHttpError(where, "no connection within the timeout");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n";
  if (!body.empty()) request += "Content-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  request += body;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw UnixHttpError(where, std::string("write: ") + strerror(errno));
    } else if (!WaitFor(fd.get(), POLLOUT, deadline, where)) {
      throw UnixHttpError(where, "request not taken within the timeout");
    }
  }
  std::string raw;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      raw.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EAGAIN && errno != EINTR) {
      throw UnixHttpError(where, std::string("read: ") + strerror(errno));
    } else if (!WaitFor(fd.get(), POLLIN, deadline, where)) {
      throw UnixHttpError(where, "no complete reply within the timeout");
    }
  }
  try {
    return ParseHttpReply(raw);
  } catch (const std::exception& e) {
    throw UnixHttpError(where, e.what());
  }
}

}  // namespace flexkit::platform
