#pragma once
// ConvoyClient over HTTP on the daemon's unix socket, speaking exactly what
// the stock Convoy CLI speaks: /v1 paths, User-Agent Convoy-Client/1, JSON
// bodies with Convoy's Go field names, plain-text or tab-indented JSON
// replies. Read-only requests are retried briefly when the daemon cannot be
// reached (it may be restarting); mutating ones are never retried.
#include <chrono>
#include <memory>

#include "driver/convoy/convoy_client.h"
#include "driver/convoy/http_unix_client.h"

namespace convoy_flexvolume {

class ConvoyHttpClient final : public ConvoyClient {
 public:
  ConvoyHttpClient(std::string socket_path, std::chrono::milliseconds connect_timeout,
                   std::chrono::milliseconds request_timeout);

  std::string Endpoint() const override;
  VolumeInfo Create(const CreateRequest& request) override;
  std::optional<VolumeInfo> Inspect(const std::string& name) override;
  std::map<std::string, VolumeInfo> List() override;
  std::string Mount(const MountRequest& request) override;
  void Umount(const std::string& name) override;
  bool Delete(const std::string& name, bool reference_only) override;
  ApiProbe ProbeApi() override;
  std::string DaemonInstance() const override;

 private:
  // Sends the request; a reply with status >= 400 or no reply at all becomes
  // a ConvoyError, except Convoy's "Volume not found." when accepted.
  HttpReply Call(const std::string& method, const std::string& path, const std::string& body,
                 bool read_only, bool accept_not_found = false);

  HttpUnixClient http_;
};

class ConvoyHttpClientFactory final : public ConvoyClientFactory {
 public:
  ConvoyHttpClientFactory(std::chrono::milliseconds connect_timeout,
                          std::chrono::milliseconds request_timeout)
      : connect_timeout_(connect_timeout), request_timeout_(request_timeout) {}
  std::unique_ptr<ConvoyClient> ForSocket(const std::string& socket_path) override {
    return std::make_unique<ConvoyHttpClient>(socket_path, connect_timeout_, request_timeout_);
  }

 private:
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds request_timeout_;
};

// Parses a VolumeResponse document; throws std::runtime_error when it is not one.
VolumeInfo ParseVolumeResponse(const std::string& json_text);

}  // namespace convoy_flexvolume
