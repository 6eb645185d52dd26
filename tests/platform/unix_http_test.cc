#include "platform/unix_http.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "tests/support/temp_dir.h"

namespace flexkit::platform {
namespace {

TEST(ParseHttpReply, ReadsContentLengthBodies) {
  auto r = ParseHttpReply("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"a\":1}");
}

TEST(ParseHttpReply, JoinsChunksAsGoSendsThem) {
  auto r = ParseHttpReply(
      "HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n"
      "3;ext=1\r\n:1}\r\n0\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "{\"a\":1}");
}

TEST(ParseHttpReply, RefusesWhatIsNotACompleteHttpReply) {
  EXPECT_THROW(ParseHttpReply(""), std::runtime_error);
  EXPECT_THROW(ParseHttpReply("{\"a\":1}"), std::runtime_error);
  EXPECT_THROW(ParseHttpReply("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}"),
               std::runtime_error);
  EXPECT_THROW(ParseHttpReply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"),
               std::runtime_error);
  EXPECT_THROW(ParseHttpReply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
               std::runtime_error);
}

// A one-shot server on a unix socket: reads the request to its blank line
// (and `body_bytes` more), answers `reply` in pieces, then closes.
class OneShotServer {
 public:
  explicit OneShotServer(std::string reply, bool answer = true) : reply_(std::move(reply)) {
    char dir[] = "/tmp/unix-http-test.XXXXXX";
    dir_ = mkdtemp(dir);
    path_ = dir_ + "/s.sock";
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path_.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    thread_ = std::thread([this, answer] {
      const int c = accept(fd_, nullptr, nullptr);
      char buf[4096];
      while (request_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        request_.append(buf, static_cast<std::size_t>(n));
      }
      if (answer) {
        for (std::size_t at = 0; at < reply_.size(); at += 5) {
          (void)!write(c, reply_.data() + at, std::min<std::size_t>(5, reply_.size() - at));
        }
      } else {
        while (read(c, buf, sizeof buf) > 0) {
        }
      }
      close(c);
    });
  }
  ~OneShotServer() {
    thread_.join();
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  const std::string& request() const { return request_; }

 private:
  std::string reply_;
  std::string dir_, path_, request_;
  int fd_ = -1;
  std::thread thread_;
};

TEST(UnixHttpRequest, SendsTheRequestAndReadsTheReplyInPieces) {
  HttpReply r;
  std::string request;
  {
    OneShotServer server(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n{\"ok\":true}\r\n0\r\n\r\n");
    r = UnixHttpRequest(server.path(), "POST", "/admin/faults", "{\"x\":1}");
    request = server.request();  // the server has read the head before it answered
  }
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"ok\":true}");
  EXPECT_EQ(request.rfind("POST /admin/faults HTTP/1.1\r\n", 0), 0u) << request;
  EXPECT_NE(request.find("Content-Length: 7\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("Connection: close\r\n"), std::string::npos) << request;
}

TEST(UnixHttpRequest, ANoSocketOrASilentServerIsAnErrorNamingIt) {
  try {
    UnixHttpRequest("/nonexistent/cloud.sock", "GET", "/admin/state", "");
    FAIL() << "no error";
  } catch (const UnixHttpError& e) {
    EXPECT_EQ(std::string(e.what()),
              "GET /admin/state on /nonexistent/cloud.sock: connect: No such file or directory");
    EXPECT_EQ(e.reason(), "connect: No such file or directory");  // what a caller words itself
  }
  OneShotServer silent("", /*answer=*/false);
  try {
    UnixHttpRequest(silent.path(), "GET", "/admin/state", "", std::chrono::milliseconds(200));
    FAIL() << "no error";
  } catch (const UnixHttpError& e) {
    EXPECT_NE(std::string(e.what()).find("no complete reply within the timeout"), std::string::npos)
        << e.what();
  }
}

TEST(UnixHttpRequest, AReplyThatIsNotHttpIsAnErrorNamingTheRequest) {
  OneShotServer server("{\"Error\":1}");
  try {
    UnixHttpRequest(server.path(), "POST", "/ec2/AttachVolume", "{}");
    FAIL() << "no error";
  } catch (const UnixHttpError& e) {
    EXPECT_EQ(e.reason().rfind("not an HTTP/1.x reply", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("POST /ec2/AttachVolume on "), std::string::npos);
  }
}

TEST(UnixSocketListening, ABoundSocketCountsOnlyOnceItsServerListens) {
  flexkit::testing::TempDir dir{"unix-http-listen"};
  const std::string path = dir.path() + "/s.sock";
  EXPECT_FALSE(UnixSocketListening(path));  // no file yet
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_FALSE(UnixSocketListening(path));  // bound, not listening: connect is refused
  ASSERT_EQ(listen(fd, 1), 0);
  EXPECT_TRUE(UnixSocketListening(path));
  close(fd);
}

}  // namespace
}  // namespace flexkit::platform
