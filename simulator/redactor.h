#pragma once
// Keeps secrets (kubernetes.io/secret/* values, raw and base64) out of
// transcripts, logs and messages: every occurrence becomes "<redacted>".
#include <set>
#include <string>

namespace flexkit::sim {

class Redactor {
 public:
  // Registers a secret's raw bytes; its base64 form is registered too.
  void AddSecret(const std::string& raw);
  std::string Apply(std::string text) const;
  bool empty() const { return secrets_.empty(); }

 private:
  std::set<std::string> secrets_;
};

}  // namespace flexkit::sim
