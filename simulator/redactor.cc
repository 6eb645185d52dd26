#include "simulator/redactor.h"

#include <cctype>

#include "gojson/encode.h"
#include "simulator/options_builder.h"

namespace flexkit::sim {
namespace {

const std::string kMark = "<redacted>";

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A JSON string's content with only what JSON requires escaped (jq, most
// encoders other than Go's, which also escapes <, > and &).
std::string MinimalJsonEscape(const std::string& raw) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

void Redactor::Register(const std::string& form) {
  if (form.size() >= kMinSubstringBytes) {
    secrets_.insert(form);
  } else {
    tokens_.insert(form);
  }
}

void Redactor::AddSecret(const std::string& raw) { AddSecret("", raw); }

void Redactor::AddSecret(const std::string& key, const std::string& raw) {
  if (raw.empty()) return;
  Register(raw);
  Register(Base64(raw));
  // As a driver's JSON reply may carry it: escaped inside a JSON string.
  std::set<std::string> escaped = {MinimalJsonEscape(raw)};
  for (auto style : {gojson::GoEscapeStyle::kBeforeGo122, gojson::GoEscapeStyle::kGo122}) {
    const std::string quoted = gojson::GoQuote(raw, style);
    escaped.insert(quoted.substr(1, quoted.size() - 2));
  }
  escaped.erase(raw);
  for (const auto& form : escaped) Register(form);
  if (raw.size() < kMinSubstringBytes) {
    notes_.push_back("secret " + (key.empty() ? std::string("value") : "key \"" + key + "\"") +
                     " is " + std::to_string(raw.size()) + " byte(s), shorter than " +
                     std::to_string(kMinSubstringBytes) +
                     ": too short to redact safely everywhere, so it is redacted only where it "
                     "stands as a whole value or word, not inside other text");
  }
}

std::string Redactor::Apply(std::string text) const {
  // Longest first, so that a secret containing another is removed whole.
  std::multiset<std::string, bool (*)(const std::string&, const std::string&)> ordered(
      [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  ordered.insert(secrets_.begin(), secrets_.end());
  for (const auto& s : ordered) {
    for (std::size_t at = text.find(s); at != std::string::npos;
         at = text.find(s, at + kMark.size())) {
      text.replace(at, s.size(), kMark);
    }
  }
  ordered.clear();
  ordered.insert(tokens_.begin(), tokens_.end());
  for (const auto& s : ordered) {
    for (std::size_t at = text.find(s); at != std::string::npos;) {
      const std::size_t end = at + s.size();
      const bool alone = (at == 0 || !IsWordByte(text[at - 1]) || !IsWordByte(s.front())) &&
                         (end == text.size() || !IsWordByte(text[end]) || !IsWordByte(s.back()));
      if (alone && text.compare(at, kMark.size(), kMark) != 0) {
        text.replace(at, s.size(), kMark);
        at = text.find(s, at + kMark.size());
      } else {
        at = text.find(s, at + 1);
      }
    }
  }
  return text;
}

}  // namespace flexkit::sim
