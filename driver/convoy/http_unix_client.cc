#include "driver/convoy/http_unix_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace convoy_flexvolume {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Protocol = asio::local::stream_protocol;
using Stream = beast::basic_stream<Protocol, asio::any_io_executor, beast::unlimited_rate_policy>;

// A daemon listing thousands of volumes stays far below this.
constexpr uint64_t kMaxReplyBytes = 64ull * 1024 * 1024;
// sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

HttpUnixClient::HttpUnixClient(std::string socket_path, std::chrono::milliseconds connect_timeout,
                               std::chrono::milliseconds request_timeout)
    : socket_path_(std::move(socket_path)),
      connect_timeout_(connect_timeout),
      request_timeout_(request_timeout) {}

HttpReply HttpUnixClient::Request(const std::string& method, const std::string& target,
                                  const std::string& body) {
  if (socket_path_.size() > kMaxSocketPath) {
    throw HttpTransportError(
        HttpTransportError::Kind::kConnect,
        "socket path is longer than " + std::to_string(kMaxSocketPath) + " bytes");
  }
  asio::io_context ioc;
  Stream stream(ioc);
  beast::error_code result;
  std::string stage = "connect";

  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "localhost");
  req.set(http::field::user_agent, "Convoy-Client/1");
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxReplyBytes);

  stream.expires_after(connect_timeout_);
  stream.async_connect(Protocol::endpoint(socket_path_), [&](beast::error_code ec) {
    if (ec) {
      result = ec;
      return;
    }
    stage = "request";
    stream.expires_after(request_timeout_);
    http::async_write(stream, req, [&](beast::error_code wec, size_t) {
      if (wec) {
        result = wec;
        return;
      }
      http::async_read(stream, buffer, parser,
                       [&](beast::error_code rec, size_t) { result = rec; });
    });
  });
  ioc.run();

  if (result == beast::error::timeout) {
    throw HttpTransportError(HttpTransportError::Kind::kTimeout,
                             stage == "connect"
                                 ? "no connection within " + Millis(connect_timeout_)
                                 : "no complete reply within " + Millis(request_timeout_));
  }
  if (result) {
    if (stage == "connect") {
      throw HttpTransportError(HttpTransportError::Kind::kConnect,
                               "cannot connect: " + result.message());
    }
    throw HttpTransportError(HttpTransportError::Kind::kProtocol,
                             "no valid HTTP reply: " + result.message());
  }
  const auto& res = parser.get();
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.content_type = std::string(res[http::field::content_type]);
  reply.body = res.body();
  return reply;
}

}  // namespace convoy_flexvolume
