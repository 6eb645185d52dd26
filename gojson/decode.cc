#include "gojson/decode.h"

#include <cerrno>
#include <cstdlib>

#include "gojson/json_chars.h"
#include "gojson/utf8.h"

namespace flexkit::gojson {
namespace {

// Go 1.21+ appendFoldedName: ASCII upper-cased; other runes folded with
// ToUpper(ToLower(r)). Only these four non-ASCII runes fold into ASCII, so
// other runes are kept as they are: they can never match an ASCII name.
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
  while (pos_ < text_.size() && IsJsonSpace(text_[pos_])) ++pos_;
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
      if (!IsHexDigit(text_[at + 2 + k])) return -1;
      v = v * 16 + HexDigitValue(text_[at + 2 + k]);
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
  while (pos_ < text_.size() && !IsJsonSpace(text_[pos_]) && text_[pos_] != ',' &&
         text_[pos_] != '}' && text_[pos_] != ']') {
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

std::string GoValues::String(const std::string& field) const {
  auto it = strings_.find(field);
  return it == strings_.end() ? std::string() : it->second;
}
int64_t GoValues::Int(const std::string& field) const {
  auto it = ints_.find(field);
  return it == ints_.end() ? 0 : it->second;
}
bool GoValues::Bool(const std::string& field) const {
  auto it = bools_.find(field);
  return it != bools_.end() && it->second;
}
std::map<std::string, std::string> GoValues::StringMap(const std::string& field) const {
  auto it = maps_.find(field);
  return it == maps_.end() ? std::map<std::string, std::string>() : it->second;
}

// decode.go's object() for one struct level, over a value the scanner took.
class StructDecoder {
 public:
  StructDecoder(std::string_view value, const GoStruct& type) : cursor_(value), type_(type) {}

  GoDecodeResult Run() {
    GoJsonKind kind = cursor_.Kind();
    if (kind == GoJsonKind::kNull) return std::move(result_);
    if (kind != GoJsonKind::kObject) {
      result_.error = std::string("json: cannot unmarshal ") + GoJsonKindName(kind) +
                      " into Go value of type " + type_.qualified_name;
      return std::move(result_);
    }
    if (cursor_.EnterObject()) {
      do {
        std::string key = cursor_.ReadKeyAndColon();
        if (const GoField* field = FindField(key)) {
          Field(*field);
        } else {
          cursor_.SkipValue();
        }
      } while (cursor_.NextMember());
    }
    return std::move(result_);
  }

 private:
  const GoField* FindField(const std::string& key) const {
    for (const auto& f : type_.fields) {
      if (f.name == key) return &f;
    }
    for (const auto& f : type_.fields) {
      if (GoFoldEquals(key, f.name)) return &f;
    }
    return nullptr;
  }

  static const char* TypeName(GoType t) {
    switch (t) {
      case GoType::kString:
        return "string";
      case GoType::kInt64:
        return "int64";
      case GoType::kBool:
        return "bool";
      case GoType::kStringMap:
        return "map[string]string";
    }
    return "";
  }

  // Go keeps decoding after a type error and reports the first one.
  void TypeError(const std::string& value, const GoField& f, const char* go_type) {
    if (!result_.error) {
      result_.error = "json: cannot unmarshal " + value + " into Go struct field " + type_.name +
                      "." + f.name + " of type " + go_type;
    }
  }
  void WrongKind(GoJsonKind kind, const GoField& f, const char* go_type) {
    TypeError(GoJsonKindName(kind), f, go_type);
    cursor_.SkipValue();
  }

  void Field(const GoField& f) {
    GoValues& v = result_.values;
    GoJsonKind kind = cursor_.Kind();
    if (kind == GoJsonKind::kNull) {
      cursor_.SkipValue();
      if (f.type == GoType::kStringMap) v.maps_.erase(f.name);  // null makes a map nil
      return;
    }
    switch (f.type) {
      case GoType::kString:
        if (kind != GoJsonKind::kString) return WrongKind(kind, f, "string");
        v.strings_[f.name] = cursor_.ReadString();
        return;
      case GoType::kBool:
        if (kind != GoJsonKind::kBool) return WrongKind(kind, f, "bool");
        v.bools_[f.name] = cursor_.ReadLiteral() == "true";
        return;
      case GoType::kInt64: {
        if (kind != GoJsonKind::kNumber) return WrongKind(kind, f, "int64");
        // strconv.ParseInt(text, 10, 64): a fraction, exponent or overflow fails.
        std::string text(cursor_.ReadLiteral());
        errno = 0;
        char* end = nullptr;
        long long n = std::strtoll(text.c_str(), &end, 10);
        if (errno != 0 || end == nullptr || *end != '\0') {
          TypeError("number " + text, f, "int64");
        } else {
          v.ints_[f.name] = static_cast<int64_t>(n);
        }
        return;
      }
      case GoType::kStringMap: {
        if (kind != GoJsonKind::kObject) return WrongKind(kind, f, "map[string]string");
        auto& map = v.maps_[f.name];
        if (!cursor_.EnterObject()) return;
        do {
          std::string key = cursor_.ReadKeyAndColon();
          GoJsonKind element = cursor_.Kind();
          // Go stores the element even when it could not decode it: then as "".
          if (element == GoJsonKind::kString) {
            map[key] = cursor_.ReadString();
            continue;
          }
          if (element != GoJsonKind::kNull) TypeError(GoJsonKindName(element), f, "string");
          cursor_.SkipValue();
          map[key] = "";
        } while (cursor_.NextMember());
        return;
      }
    }
  }

  GoJsonCursor cursor_;
  const GoStruct& type_;
  GoDecodeResult result_;
};

GoDecodeResult GoDecode(std::string_view body, const GoStruct& type) {
  GoJsonStreamValue read = GoJsonReadValue(body);
  if (read.error) {
    GoDecodeResult result;
    result.error = std::move(read.error);
    return result;
  }
  return StructDecoder(read.value, type).Run();
}

}  // namespace flexkit::gojson
