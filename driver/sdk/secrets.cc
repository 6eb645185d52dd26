#include "driver/sdk/secrets.h"

namespace flexvolume {

SecretRegistry& SecretRegistry::Global() {
  static SecretRegistry* registry = new SecretRegistry();  // never destroyed: used by crash paths
  return *registry;
}

void SecretRegistry::Add(std::string_view secret) {
  if (secret.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  secrets_.emplace(secret);
}

std::string SecretRegistry::Redact(std::string_view text) const {
  std::string out(text);
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& secret : secrets_) {
    size_t pos = 0;
    while ((pos = out.find(secret, pos)) != std::string::npos) {
      out.replace(pos, secret.size(), kRedacted);
      pos += std::char_traits<char>::length(kRedacted);
    }
  }
  return out;
}

void SecretRegistry::ClearForTesting() {
  std::lock_guard<std::mutex> lock(mu_);
  secrets_.clear();
}

}  // namespace flexvolume
