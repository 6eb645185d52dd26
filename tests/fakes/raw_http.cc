#include "tests/fakes/raw_http.h"

#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace flexkit::fakes::testing {

std::optional<std::string> RawResponse::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return std::nullopt;
}

HttpConnection::HttpConnection(const std::string& socket_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("connect " + socket_path + ": " + std::strerror(err));
  }
}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void HttpConnection::Send(const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      // The server may answer and close before reading everything (a body
      // over the limit, a malformed request): its answer is still there to
      // read, as an HTTP client reads it after a failed write.
      if (errno == EPIPE || errno == ECONNRESET) return;
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
}

bool HttpConnection::Fill() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
}

RawResponse HttpConnection::Read(bool head) {
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill()) throw std::runtime_error("connection closed before the response headers");
  }
  std::string head_text = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);
  RawResponse r;
  size_t line_end = head_text.find("\r\n");
  r.status_line = head_text.substr(0, line_end);
  r.status = std::stoi(r.status_line.substr(9, 3));
  size_t pos = line_end == std::string::npos ? head_text.size() : line_end + 2;
  while (pos < head_text.size()) {
    size_t next = head_text.find("\r\n", pos);
    if (next == std::string::npos) next = head_text.size();
    std::string line = head_text.substr(pos, next - pos);
    auto colon = line.find(':');
    r.headers.emplace_back(line.substr(0, colon), line.substr(colon + 2));
    pos = next + 2;
  }
  if (head) return r;
  if (auto te = r.Header("Transfer-Encoding"); te && *te == "chunked") {
    r.chunked = true;
    for (;;) {
      size_t crlf;
      while ((crlf = buffer_.find("\r\n")) == std::string::npos) {
        if (!Fill()) throw std::runtime_error("connection closed inside a chunk header");
      }
      size_t size = std::stoul(buffer_.substr(0, crlf), nullptr, 16);
      while (buffer_.size() < crlf + 2 + size + 2) {
        if (!Fill()) throw std::runtime_error("connection closed inside a chunk");
      }
      r.body += buffer_.substr(crlf + 2, size);
      buffer_.erase(0, crlf + 2 + size + 2);
      if (size == 0) break;
    }
  } else if (auto cl = r.Header("Content-Length")) {
    size_t size = std::stoul(*cl);
    while (buffer_.size() < size) {
      if (!Fill()) throw std::runtime_error("connection closed inside the body");
    }
    r.body = buffer_.substr(0, size);
    buffer_.erase(0, size);
  } else {
    while (Fill()) {
    }
    r.body = buffer_;
    buffer_.clear();
  }
  return r;
}

std::string BuildRequest(const std::string& method, const std::string& target,
                         const std::optional<std::string>& body, const std::string& user_agent) {
  std::string req = method + " " + target +
                    " HTTP/1.1\r\nHost: localhost\r\nUser-Agent: " + user_agent +
                    "\r\nAccept: */*\r\n";
  if (body) {
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body->size()) +
           "\r\n\r\n" + *body;
  } else {
    req += "\r\n";
  }
  return req;
}

RawResponse HttpConnection::Request(const std::string& method, const std::string& target,
                                    const std::optional<std::string>& body,
                                    const std::string& user_agent) {
  Send(BuildRequest(method, target, body, user_agent));
  return Read(method == "HEAD");
}

}  // namespace flexkit::fakes::testing
