#include "fakes/convoy/cloud_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace flexkit::fakes::convoy {
namespace {

std::string Dechunk(const std::string& body) {
  std::string out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t crlf = body.find("\r\n", pos);
    if (crlf == std::string::npos) break;
    size_t size = std::strtoul(body.substr(pos, crlf - pos).c_str(), nullptr, 16);
    if (size == 0) break;
    out += body.substr(crlf + 2, size);
    pos = crlf + 2 + size + 2;
  }
  return out;
}

}  // namespace

nlohmann::json CloudClient::Call(const std::string& operation, const nlohmann::json& body) const {
  auto unreachable = [&](const std::string& why) {
    return CloudError("Unreachable", operation + " on cloud " + socket_path_ + ": " + why);
  };
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof(addr.sun_path) - 1);
  timeval timeout{120, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    throw unreachable(std::strerror(err));
  }
  std::string payload = body.dump();
  std::string request = "POST /ec2/" + operation +
                        " HTTP/1.1\r\nHost: cloud\r\nConnection: close\r\nContent-Type: "
                        "application/json\r\nContent-Length: " +
                        std::to_string(payload.size()) + "\r\n\r\n" + payload;
  for (size_t off = 0; off < request.size();) {
    ssize_t n = ::send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw unreachable(std::strerror(err));
    }
    off += static_cast<size_t>(n);
  }
  std::string response;
  char buf[16384];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t end = response.find("\r\n\r\n");
  if (response.size() < 12 || end == std::string::npos)
    throw unreachable("connection closed without an answer");
  int status = std::atoi(response.substr(9, 3).c_str());
  std::string head = response.substr(0, end);
  std::string content = response.substr(end + 4);
  if (head.find("Transfer-Encoding: chunked") != std::string::npos) content = Dechunk(content);
  nlohmann::json answer = nlohmann::json::parse(content, nullptr, false);
  if (answer.is_discarded()) throw unreachable("answer is not JSON");
  if (status != 200) {
    const nlohmann::json* error = nullptr;
    if (answer.is_object() && answer.contains("Error") && answer["Error"].is_object()) {
      error = &answer["Error"];
    }
    auto text = [&](const char* key, const std::string& fallback) {
      if (error == nullptr || !error->contains(key) || !(*error)[key].is_string()) return fallback;
      return (*error)[key].get<std::string>();
    };
    throw CloudError(text("Code", "Unknown"),
                     text("Message", "HTTP " + std::to_string(status) + " without an EC2 error"));
  }
  return answer;
}

std::string AwsErrorText(const CloudError& e) {
  return "AWS Error:  " + e.code + " " + e.what() + " <nil>\n400 convoy-fake";
}

}  // namespace flexkit::fakes::convoy
