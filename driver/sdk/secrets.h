#pragma once
// The secret values this process has seen, so that every outgoing text (the
// reply message and each log line) can be scrubbed of them, whatever code
// produced the text.
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace flexvolume {

inline constexpr const char* kRedacted = "<redacted>";

class SecretRegistry {
 public:
  static SecretRegistry& Global();

  // Remembers `secret` (empty values are ignored).
  void Add(std::string_view secret);

  // `text` with every occurrence of every remembered secret replaced by
  // kRedacted, longest secrets first so a secret containing another is
  // removed whole.
  std::string Redact(std::string_view text) const;

  void ClearForTesting();

 private:
  mutable std::mutex mu_;
  // Ordered longest first.
  struct LongerFirst {
    bool operator()(const std::string& a, const std::string& b) const {
      return a.size() != b.size() ? a.size() > b.size() : a < b;
    }
  };
  std::set<std::string, LongerFirst> secrets_;
};

}  // namespace flexvolume
