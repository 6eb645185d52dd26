#pragma once
// Keeps secrets (kubernetes.io/secret/* values, raw, base64 and JSON-escaped) out of
// transcripts, logs and messages. A value of at least kMinSubstringBytes is
// replaced by "<redacted>" wherever it occurs. A shorter one would take
// ordinary text with it ("b" in "kubernetes"), so it is replaced only where
// it stands as a whole token (a whole option value, a base64 value, a word:
// no ASCII letter or digit on either side), and the redactor says so.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace flexkit::sim {

class Redactor {
 public:
  static constexpr std::size_t kMinSubstringBytes = 6;

  // Registers a secret's raw bytes; its base64 form and its escaped form
  // inside a JSON string (Go's escaping) are registered too.
  void AddSecret(const std::string& raw);
  // The same, naming the secret's key in ShortSecretNotes().
  void AddSecret(const std::string& key, const std::string& raw);
  std::string Apply(std::string text) const;
  bool empty() const { return secrets_.empty() && tokens_.empty(); }
  // One sentence per secret too short to redact everywhere (no value).
  const std::vector<std::string>& ShortSecretNotes() const { return notes_; }

 private:
  void Register(const std::string& form);
  std::set<std::string> secrets_;  // replaced wherever they occur
  std::set<std::string> tokens_;   // replaced only as whole tokens
  std::vector<std::string> notes_;
};

}  // namespace flexkit::sim
