#include "tests/driver/convoy/scripted_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace convoy_flexvolume::testing {
namespace {

// Reads one HTTP request (headers and Content-Length body).
std::string ReadRequest(int fd) {
  std::string data;
  char buf[4096];
  while (true) {
    size_t header_end = data.find("\r\n\r\n");
    if (header_end != std::string::npos) {
      size_t length = 0;
      auto pos = data.find("Content-Length: ");
      if (pos != std::string::npos && pos < header_end) length = std::stoul(data.substr(pos + 16));
      if (data.size() >= header_end + 4 + length) return data;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 2000) <= 0) return data;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return data;
    data.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

ScriptedServer::ScriptedServer(std::string socket_path, std::vector<Reply> replies)
    : path_(std::move(socket_path)), replies_(std::move(replies)) {
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  unlink(path_.c_str());
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 16) != 0) {
    throw std::runtime_error("ScriptedServer: cannot listen on " + path_ + ": " +
                             std::strerror(errno));
  }
  thread_ = std::thread([this] { Serve(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  thread_.join();
  close(listen_fd_);
  unlink(path_.c_str());
}

void ScriptedServer::Serve() {
  size_t index = 0;
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const Reply& reply = replies_[std::min(index++, replies_.size() - 1)];
    std::string request = ReadRequest(fd);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    auto until = std::chrono::steady_clock::now() + reply.delay;
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reply.close_without_reply && !stopping_) {
      ssize_t ignored = write(fd, reply.bytes.data(), reply.bytes.size());
      (void)ignored;
    }
    close(fd);
  }
}

std::vector<std::string> ScriptedServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::string ScriptedServer::Http(int status, const std::string& reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace convoy_flexvolume::testing
