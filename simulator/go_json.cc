#include "simulator/go_json.h"

#include <vector>

namespace flexkit::sim {
namespace {

constexpr std::size_t kMaxNestingDepth = 10000;  // Go's maxNestingDepth
constexpr const char* kUnexpectedEnd = "unexpected end of JSON input";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// The checkValid scanner, iterative so that 10000 levels cost no stack.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::optional<std::string> Run() {
    SkipSpace();
    for (;;) {
      if (auto err = Value()) return err;
      if (auto err = AfterValue()) return err;
      if (done_) return std::nullopt;
    }
  }

 private:
  std::string Bad(const char* context) const {
    return "invalid character " + GoQuoteChar(static_cast<unsigned char>(s_[i_])) + " " + context;
  }
  bool AtEnd() const { return i_ >= s_.size(); }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(s_[i_])) ++i_;
  }

  // Scans one value start; for containers only the opening (and the first
  // key), leaving the rest to the loop in Run.
  std::optional<std::string> Value() {
    for (;;) {
      if (AtEnd()) return kUnexpectedEnd;
      char c = s_[i_];
      if (c == '{' || c == '[') {
        if (stack_.size() >= kMaxNestingDepth) return "exceeded max depth";
        stack_.push_back(c);
        ++i_;
        SkipSpace();
        if (AtEnd()) return kUnexpectedEnd;
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
    if (AtEnd()) return kUnexpectedEnd;
    if (s_[i_] != ':') return Bad("after object key");
    ++i_;
    SkipSpace();
    return std::nullopt;
  }

  // After a complete value: closes containers, or positions on the next
  // value (done_ once the top-level value is complete and only space follows).
  std::optional<std::string> AfterValue() {
    for (;;) {
      SkipSpace();
      if (stack_.empty()) {
        if (!AtEnd()) return Bad("after top-level value");
        done_ = true;
        return std::nullopt;
      }
      if (AtEnd()) return kUnexpectedEnd;
      char c = s_[i_];
      if (stack_.back() == '{') {
        if (c == ',') {
          ++i_;
          SkipSpace();
          if (AtEnd()) return kUnexpectedEnd;
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
      if (AtEnd()) return kUnexpectedEnd;
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return std::nullopt;
      }
      if (c == '\\') {
        ++i_;
        if (AtEnd()) return kUnexpectedEnd;
        char e = s_[i_];
        if (e == 'u') {
          ++i_;
          for (int k = 0; k < 4; ++k, ++i_) {
            if (AtEnd()) return kUnexpectedEnd;
            if (!IsHex(s_[i_])) return Bad("in \\u hexadecimal character escape");
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
      if (AtEnd()) return kUnexpectedEnd;
      if (!IsDigit(s_[i_])) return Bad("in numeric literal");
    }
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    if (!AtEnd() && s_[i_] == '.') {
      ++i_;
      if (AtEnd()) return kUnexpectedEnd;
      if (!IsDigit(s_[i_])) return Bad("after decimal point in numeric literal");
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    if (!AtEnd() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (AtEnd()) return kUnexpectedEnd;
      if (s_[i_] == '+' || s_[i_] == '-') {
        ++i_;
        if (AtEnd()) return kUnexpectedEnd;
      }
      if (!IsDigit(s_[i_])) return Bad("in exponent of numeric literal");
      while (!AtEnd() && IsDigit(s_[i_])) ++i_;
    }
    return std::nullopt;
  }

  std::optional<std::string> Literal(std::string_view word) {
    ++i_;
    for (std::size_t k = 1; k < word.size(); ++k, ++i_) {
      if (AtEnd()) return kUnexpectedEnd;
      if (s_[i_] != word[k]) {
        std::string context = "in literal " + std::string(word) + " (expecting " +
                              GoQuoteChar(static_cast<unsigned char>(word[k])) + ")";
        return Bad(context.c_str());
      }
    }
    return std::nullopt;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::vector<char> stack_;
  bool done_ = false;
};

}  // namespace

std::optional<std::string> GoJsonSyntaxError(std::string_view input) {
  return Scanner(input).Run();
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

std::pair<char32_t, std::size_t> GoDecodeRune(std::string_view s) {
  constexpr std::pair<char32_t, std::size_t> kError{0xFFFD, 1};
  if (s.empty()) return kError;
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < s.size() && b(k) >= lo && b(k) <= hi;
  };
  unsigned char b0 = b(0);
  if (b0 < 0x80) return {b0, 1};
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!cont(1)) return kError;
    return {char32_t((b0 & 0x1F) << 6 | (b(1) & 0x3F)), 2};
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    if (!cont(1, lo, hi) || !cont(2)) return kError;
    return {char32_t((b0 & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F)), 3};
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (!cont(1, lo, hi) || !cont(2) || !cont(3)) return kError;
    return {char32_t((b0 & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F)),
            4};
  }
  return kError;
}

void AppendUtf8(std::string& out, char32_t r) {
  if (r < 0x80) {
    out += static_cast<char>(r);
  } else if (r < 0x800) {
    out += static_cast<char>(0xC0 | (r >> 6));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else if (r < 0x10000) {
    out += static_cast<char>(0xE0 | (r >> 12));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (r >> 18));
    out += static_cast<char>(0x80 | ((r >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((r >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (r & 0x3F));
  }
}

namespace {

// Go 1.21+ appendFoldedName: ASCII upper-cased; other runes folded with
// ToUpper(ToLower(r)). Only these four non-ASCII runes fold into ASCII.
std::string FoldName(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto [r, n] = GoDecodeRune(s.substr(i));
    i += n;
    if (r < 0x80) {
      out += (r >= 'a' && r <= 'z') ? static_cast<char>(r - 32) : static_cast<char>(r);
    } else if (r == 0x212A) {
      out += 'K';  // Kelvin sign
    } else if (r == 0x017F) {
      out += 'S';  // long s
    } else if (r == 0x0130 || r == 0x0131) {
      out += 'I';  // dotted capital I, dotless small i
    } else {
      AppendUtf8(out, r);
    }
  }
  return out;
}

}  // namespace

bool GoFoldEquals(std::string_view json_key, std::string_view field_name) {
  return json_key == field_name || FoldName(json_key) == FoldName(field_name);
}

const char* GoJsonKindName(GoJsonKind kind) {
  switch (kind) {
    case GoJsonKind::kNull:
      return "null";
    case GoJsonKind::kBool:
      return "bool";
    case GoJsonKind::kNumber:
      return "number";
    case GoJsonKind::kString:
      return "string";
    case GoJsonKind::kArray:
      return "array";
    case GoJsonKind::kObject:
      return "object";
  }
  return "value";
}

void GoJsonCursor::SkipSpace() {
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
}

GoJsonKind GoJsonCursor::Kind() {
  SkipSpace();
  switch (text_[pos_]) {
    case '{':
      return GoJsonKind::kObject;
    case '[':
      return GoJsonKind::kArray;
    case '"':
      return GoJsonKind::kString;
    case 't':
    case 'f':
      return GoJsonKind::kBool;
    case 'n':
      return GoJsonKind::kNull;
    default:
      return GoJsonKind::kNumber;
  }
}

std::string GoJsonCursor::ReadString() {
  SkipSpace();
  ++pos_;  // opening quote
  std::string out;
  auto read_u4 = [&](std::size_t at) -> int {
    if (at + 6 > text_.size() || text_[at] != '\\' || text_[at + 1] != 'u') return -1;
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      if (!IsHex(text_[at + 2 + k])) return -1;
      v = v * 16 + HexValue(text_[at + 2 + k]);
    }
    return v;
  };
  while (text_[pos_] != '"') {
    char c = text_[pos_];
    if (c == '\\') {
      char e = text_[pos_ + 1];
      if (e == 'u') {
        char32_t r = static_cast<char32_t>(read_u4(pos_));
        pos_ += 6;
        if (r >= 0xD800 && r < 0xE000) {
          int low = read_u4(pos_);
          if (r < 0xDC00 && low >= 0xDC00 && low < 0xE000) {
            r = 0x10000 + ((r - 0xD800) << 10) + (static_cast<char32_t>(low) - 0xDC00);
            pos_ += 6;
          } else {
            r = 0xFFFD;
          }
        }
        AppendUtf8(out, r);
        continue;
      }
      switch (e) {
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        default:
          out += e;  // " \ /
      }
      pos_ += 2;
      continue;
    }
    auto [r, n] = GoDecodeRune(text_.substr(pos_));
    if (r == 0xFFFD && n == 1) {
      AppendUtf8(out, r);
    } else {
      out.append(text_.substr(pos_, n));
    }
    pos_ += n;
  }
  ++pos_;  // closing quote
  return out;
}

std::string_view GoJsonCursor::ReadLiteral() {
  SkipSpace();
  std::size_t start = pos_;
  while (pos_ < text_.size() && !IsSpace(text_[pos_]) && text_[pos_] != ',' && text_[pos_] != '}' &&
         text_[pos_] != ']') {
    ++pos_;
  }
  return text_.substr(start, pos_ - start);
}

void GoJsonCursor::SkipValue() {
  // Validated input: counting brackets is enough, with strings read whole so
  // that brackets inside them do not count. A string followed by ':' is a key.
  std::size_t depth = 0;
  for (;;) {
    SkipSpace();
    char c = text_[pos_];
    if (c == '{' || c == '[') {
      ++depth;
      ++pos_;
      continue;
    }
    if (c == ',') {
      ++pos_;
      continue;
    }
    if (c == '}' || c == ']') {
      --depth;
      ++pos_;
    } else if (c == '"') {
      ReadString();
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ':') {
        ++pos_;
        continue;
      }
    } else {
      ReadLiteral();
    }
    if (depth == 0) return;
  }
}

bool GoJsonCursor::EnterObject() {
  SkipSpace();
  ++pos_;
  SkipSpace();
  if (text_[pos_] == '}') {
    ++pos_;
    return false;
  }
  return true;
}

bool GoJsonCursor::NextMember() {
  SkipSpace();
  return text_[pos_++] == ',';
}

std::string GoJsonCursor::ReadKeyAndColon() {
  std::string key = ReadString();
  SkipSpace();
  ++pos_;  // ':'
  return key;
}

std::string GoQuoteString(std::string_view s, GoEscapeStyle style) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      if (b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&') {
        out += static_cast<char>(b);
        continue;
      }
      switch (b) {
        case '"':
          out += "\\\"";
          continue;
        case '\\':
          out += "\\\\";
          continue;
        case '\n':
          out += "\\n";
          continue;
        case '\r':
          out += "\\r";
          continue;
        case '\t':
          out += "\\t";
          continue;
        case '\b':
          if (style == GoEscapeStyle::kGo122) {
            out += "\\b";
            continue;
          }
          break;
        case '\f':
          if (style == GoEscapeStyle::kGo122) {
            out += "\\f";
            continue;
          }
          break;
        default:
          break;
      }
      out += "\\u00";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      continue;
    }
    auto [r, n] = GoDecodeRune(s.substr(i));
    if (r == 0xFFFD && n == 1) {
      out += "\\ufffd";
    } else if (r == 0x2028 || r == 0x2029) {
      out += r == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string GoMarshalStringMap(const std::map<std::string, std::string>& map, GoEscapeStyle style) {
  // std::map<std::string> orders keys bytewise (char_traits compares as
  // unsigned char), exactly as Go's sort of the map keys.
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!first) out += ',';
    first = false;
    out += GoQuoteString(key, style);
    out += ':';
    out += GoQuoteString(value, style);
  }
  return out + "}";
}

}  // namespace flexkit::sim
