#pragma once
// The daemon's client of the cloud's EC2 API (fakes/ebs/cloud_api.h): one
// short connection per call over the cloud's unix socket, JSON both ways.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "fakes/common/errors.h"

namespace flexkit::fakes::convoy {

struct CloudError : FakeError {
  CloudError(std::string error_code, const std::string& message)
      : FakeError(message), code(std::move(error_code)) {}
  std::string code;  // EC2's code, or "Unreachable" when the cloud did not answer
};

class CloudClient {
 public:
  explicit CloudClient(std::string socket_path) : socket_path_(std::move(socket_path)) {}
  // POST /ec2/<operation> with `body`; the parsed answer, or CloudError.
  nlohmann::json Call(const std::string& operation, const nlohmann::json& body) const;

 private:
  std::string socket_path_;
};

// Convoy's rendering of an AWS error (ebs/ebs_service.go parseAwsError).
std::string AwsErrorText(const CloudError& e);

}  // namespace flexkit::fakes::convoy
