#include "fakes/convoy/cloud_client.h"

#include "platform/unix_http.h"

namespace flexkit::fakes::convoy {

nlohmann::json CloudClient::Call(const std::string& operation, const nlohmann::json& body) const {
  auto unreachable = [&](const std::string& why) {
    return CloudError("Unreachable", operation + " on cloud " + socket_path_ + ": " + why);
  };
  platform::HttpReply reply;
  try {
    reply = platform::UnixHttpRequest(socket_path_, "POST", "/ec2/" + operation, body.dump(),
                                      std::chrono::seconds(120));
  } catch (const platform::UnixHttpError& e) {
    throw unreachable(e.reason());
  }
  const int status = reply.status;
  const std::string& content = reply.body;
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
