#include "simulator/redactor.h"

#include "simulator/options_builder.h"

namespace flexkit::sim {

void Redactor::AddSecret(const std::string& raw) {
  if (raw.empty()) return;
  secrets_.insert(raw);
  secrets_.insert(Base64(raw));
}

std::string Redactor::Apply(std::string text) const {
  // Longest first, so that a secret containing another is removed whole.
  std::multiset<std::string, bool (*)(const std::string&, const std::string&)> ordered(
      [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  ordered.insert(secrets_.begin(), secrets_.end());
  static const std::string kMark = "<redacted>";
  for (const auto& s : ordered) {
    for (std::size_t at = text.find(s); at != std::string::npos;
         at = text.find(s, at + kMark.size())) {
      text.replace(at, s.size(), kMark);
    }
  }
  return text;
}

}  // namespace flexkit::sim
