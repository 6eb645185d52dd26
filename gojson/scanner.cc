#include "gojson/scanner.h"

#include <cstddef>
#include <vector>

#include "gojson/json_chars.h"
#include "gojson/utf8.h"

namespace flexkit::gojson {
namespace {

constexpr std::size_t kMaxNestingDepth = 10000;  // Go's maxNestingDepth

// Unmarshal checks the whole input; Decoder.Decode stops after the first value.
enum class Mode { kWholeInput, kFirstValue };

class Scanner {
 public:
  Scanner(std::string_view s, Mode mode) : s_(s), mode_(mode) {}

  std::optional<std::string> Run() {
    SkipSpace();
    if (mode_ == Mode::kFirstValue && AtEnd()) return "EOF";
    start_ = i_;
    for (;;) {
      if (auto err = Value()) return err;
      if (auto err = AfterValue()) return err;
      if (done_) return std::nullopt;
    }
  }

  std::string_view ValueText() const { return s_.substr(start_, end_ - start_); }

 private:
  std::string Bad(const std::string& context) const {
    return "invalid character " + GoQuoteChar(static_cast<unsigned char>(s_[i_])) + " " + context;
  }
  // The input ended. Unmarshal's scanner then steps once more with a space,
  // so a state that rejects a space names it (`in_state_rejecting_space`);
  // the Decoder only says the stream ended early.
  std::string Eof(const char* in_state_rejecting_space = nullptr) const {
    if (mode_ == Mode::kFirstValue) return "unexpected EOF";
    if (in_state_rejecting_space != nullptr) {
      return std::string("invalid character ' ' ") + in_state_rejecting_space;
    }
    return "unexpected end of JSON input";
  }
  bool AtEnd() const { return i_ >= s_.size(); }
  void SkipSpace() {
    while (!AtEnd() && IsJsonSpace(s_[i_])) ++i_;
  }

  // Scans one value start; for containers only the opening (and the first
  // key), leaving the rest to the loop in Run.
  std::optional<std::string> Value() {
    for (;;) {
      if (AtEnd()) return Eof();
      char c = s_[i_];
      if (c == '{' || c == '[') {
        if (stack_.size() >= kMaxNestingDepth) return Bad("exceeded max depth");
        stack_.push_back(c);
        ++i_;
        SkipSpace();
        if (AtEnd()) return Eof();
        if (c == '{') {
          if (s_[i_] == '}') {
            ++i_;
            stack_.pop_back();
            return std::nullopt;
          }
          if (auto err = Key()) return err;
          continue;  // the member's value
        }
        if (s_[i_] == ']') {
          ++i_;
          stack_.pop_back();
          return std::nullopt;
        }
        continue;  // the first element
      }
      if (c == '"') return String();
      if (c == '-' || IsDigit(c)) return Number();
      if (c == 't') return Literal("true");
      if (c == 'f') return Literal("false");
      if (c == 'n') return Literal("null");
      return Bad("looking for beginning of value");
    }
  }

  // At what must be a key string; leaves the cursor on the member's value.
  std::optional<std::string> Key() {
    if (s_[i_] != '"') return Bad("looking for beginning of object key string");
    if (auto err = String()) return err;
    SkipSpace();
    if (AtEnd()) return Eof();
    if (s_[i_] != ':') return Bad("after object key");
    ++i_;
    SkipSpace();
    return std::nullopt;
  }

  // After a complete value: closes containers, or positions on the next
  // value (done_ once the top-level value is complete).
  std::optional<std::string> AfterValue() {
    for (;;) {
      if (stack_.empty()) {
        end_ = i_;
        SkipSpace();
        if (mode_ == Mode::kWholeInput && !AtEnd()) return Bad("after top-level value");
        done_ = true;
        return std::nullopt;
      }
      SkipSpace();
      if (AtEnd()) return Eof();
      char c = s_[i_];
      if (stack_.back() == '{') {
        if (c == ',') {
          ++i_;
          SkipSpace();
          if (AtEnd()) return Eof();
          return Key();
        }
        if (c != '}') return Bad("after object key:value pair");
      } else {
        if (c == ',') {
          ++i_;
          SkipSpace();
          return std::nullopt;
        }
        if (c != ']') return Bad("after array element");
      }
      ++i_;
      stack_.pop_back();
    }
  }

  std::optional<std::string> String() {
    ++i_;  // opening quote
    for (;;) {
      if (AtEnd()) return Eof();
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return std::nullopt;
      }
      if (c == '\\') {
        ++i_;
        if (AtEnd()) return Eof("in string escape code");
        char e = s_[i_];
        if (e == 'u') {
          ++i_;
          for (int k = 0; k < 4; ++k, ++i_) {
            if (AtEnd()) return Eof("in \\u hexadecimal character escape");
            if (!IsHexDigit(s_[i_])) return Bad("in \\u hexadecimal character escape");
          }
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return Bad("in string escape code");
        }
        ++i_;
        continue;
      }
      if (c < 0x20) return Bad("in string literal");
      ++i_;
    }
  }

  std::optional<std::string> Number() {
    if (s_[i_] == '-') {
      ++i_;
      if (AtEnd()) return Eof("in numeric literal");
      if (!IsDigit(s_[i_])) return Bad("in numeric literal");
    }
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    if (!AtEnd() && s_[i_] == '.') {
      ++i_;
      if (AtEnd()) return Eof("after decimal point in numeric literal");
      if (!IsDigit(s_[i_])) return Bad("after decimal point in numeric literal");
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    if (!AtEnd() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (AtEnd()) return Eof("in exponent of numeric literal");
      if (s_[i_] == '+' || s_[i_] == '-') {
        ++i_;
        if (AtEnd()) return Eof("in exponent of numeric literal");
      }
      if (!IsDigit(s_[i_])) return Bad("in exponent of numeric literal");
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    return std::nullopt;
  }

  std::optional<std::string> Literal(std::string_view word) {
    ++i_;
    for (std::size_t k = 1; k < word.size(); ++k, ++i_) {
      std::string context = "in literal " + std::string(word) + " (expecting " +
                            GoQuoteChar(static_cast<unsigned char>(word[k])) + ")";
      if (AtEnd()) return Eof(context.c_str());
      if (s_[i_] != word[k]) return Bad(context);
    }
    return std::nullopt;
  }

  std::string_view s_;
  Mode mode_;
  std::size_t i_ = 0;
  std::size_t start_ = 0;
  std::size_t end_ = 0;
  std::vector<char> stack_;
  bool done_ = false;
};

}  // namespace

std::optional<std::string> GoJsonSyntaxError(std::string_view input) {
  return Scanner(input, Mode::kWholeInput).Run();
}

GoJsonStreamValue GoJsonReadValue(std::string_view stream) {
  Scanner scanner(stream, Mode::kFirstValue);
  GoJsonStreamValue result;
  result.error = scanner.Run();
  if (!result.error) result.value = scanner.ValueText();
  return result;
}

std::string GoQuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  static const char* kHex = "0123456789abcdef";
  std::string out = "'";
  switch (c) {
    case '\a':
      out += "\\a";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\v':
      out += "\\v";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
      } else if ((c >= 0x80 && c <= 0xa0) || c == 0xad) {  // not printable in Go
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
      } else {
        AppendUtf8(out, c);  // Go's string(byte) is the Latin-1 rune
      }
  }
  return out + "'";
}

}  // namespace flexkit::gojson
