#include "fakes/convoy/go_json.h"

#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace flexkit::fakes::convoy {
namespace {

struct Node {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  std::string text;  // string value, or the number literal
  std::vector<Node> items;
  std::vector<std::pair<std::string, Node>> members;
};

const char* KindName(Node::Kind k) {
  switch (k) {
    case Node::kBool:
      return "bool";
    case Node::kNumber:
      return "number";
    case Node::kString:
      return "string";
    case Node::kArray:
      return "array";
    case Node::kObject:
      return "object";
    default:
      return "null";
  }
}

// Go's quoteChar.
std::string QuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  if (c == '\n') return "'\\n'";
  if (c == '\r') return "'\\r'";
  if (c == '\t') return "'\\t'";
  if (c < 0x20 || c == 0x7f) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "'\\x%02x'", c);
    return buf;
  }
  if (c >= 0x80) {
    // Go converts the byte to the rune U+0080..U+00FF.
    std::string s = "'";
    s.push_back(static_cast<char>(0xC0 | (c >> 6)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    return s + "'";
  }
  return std::string("'") + static_cast<char>(c) + "'";
}

struct SyntaxError {
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in) {}

  // Parses the first value; throws SyntaxError with Go's text.
  Node ParseTopLevel() {
    SkipSpace();
    if (pos_ >= in_.size()) throw SyntaxError{"EOF"};
    return ParseValue();
  }

 private:
  [[noreturn]] void Invalid(const std::string& context) {
    throw SyntaxError{"invalid character " + QuoteChar(static_cast<unsigned char>(in_[pos_])) +
                      " " + context};
  }
  [[noreturn]] void UnexpectedEof() { throw SyntaxError{"unexpected EOF"}; }

  void SkipSpace() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char Peek() {
    if (pos_ >= in_.size()) UnexpectedEof();
    return in_[pos_];
  }

  Node ParseValue() {
    SkipSpace();
    char c = Peek();
    Node n;
    switch (c) {
      case '{':
        ParseObject(n);
        return n;
      case '[':
        ParseArray(n);
        return n;
      case '"':
        n.kind = Node::kString;
        n.text = ParseString();
        return n;
      case 't':
        Literal("true");
        n.kind = Node::kBool;
        n.boolean = true;
        return n;
      case 'f':
        Literal("false");
        n.kind = Node::kBool;
        return n;
      case 'n':
        Literal("null");
        return n;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          n.kind = Node::kNumber;
          n.text = ParseNumber();
          return n;
        }
        Invalid("looking for beginning of value");
    }
  }

  void Literal(std::string_view word) {
    ++pos_;
    for (size_t i = 1; i < word.size(); ++i) {
      if (Peek() != word[i]) {
        Invalid("in literal " + std::string(word) + " (expecting " +
                QuoteChar(static_cast<unsigned char>(word[i])) + ")");
      }
      ++pos_;
    }
  }

  std::string ParseNumber() {
    size_t start = pos_;
    auto digit = [&] { return pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9'; };
    if (in_[pos_] == '-') {
      ++pos_;
      if (!digit()) {
        Peek();
        Invalid("in numeric literal");
      }
    }
    if (in_[pos_] == '0') {
      ++pos_;
    } else {
      while (digit()) ++pos_;
    }
    if (pos_ < in_.size() && in_[pos_] == '.') {
      ++pos_;
      if (!digit()) {
        Peek();
        Invalid("after decimal point in numeric literal");
      }
      while (digit()) ++pos_;
    }
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) ++pos_;
      if (!digit()) {
        Peek();
        Invalid("in exponent of numeric literal");
      }
      while (digit()) ++pos_;
    }
    return std::string(in_.substr(start, pos_ - start));
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  uint32_t Hex4() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = Peek();
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) Invalid("in \\u hexadecimal character escape");
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return v;
  }

  std::string ParseString() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      unsigned char c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) Invalid("in string literal");
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      char e = Peek();
      ++pos_;
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp = Hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && pos_ + 1 < in_.size() && in_[pos_] == '\\' &&
              in_[pos_ + 1] == 'u') {
            size_t save = pos_;
            pos_ += 2;
            uint32_t lo = Hex4();
            if (lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              pos_ = save;
              cp = 0xFFFD;
            }
          } else if (cp >= 0xD800 && cp < 0xE000) {
            cp = 0xFFFD;
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          --pos_;
          Invalid("in string escape code");
      }
    }
  }

  void ParseObject(Node& n) {
    n.kind = Node::kObject;
    ++pos_;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      SkipSpace();
      if (Peek() != '"') Invalid("looking for beginning of object key string");
      std::string key = ParseString();
      SkipSpace();
      if (Peek() != ':') Invalid("after object key");
      ++pos_;
      Node value = ParseValue();
      n.members.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      char c = Peek();
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == '}') {
        ++pos_;
        return;
      }
      Invalid("after object key:value pair");
    }
  }

  void ParseArray(Node& n) {
    n.kind = Node::kArray;
    ++pos_;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      n.items.push_back(ParseValue());
      SkipSpace();
      char c = Peek();
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == ']') {
        ++pos_;
        return;
      }
      Invalid("after array element");
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
};

const char* TypeName(GoType t) {
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

const GoField* FindField(const GoStruct& type, const std::string& key) {
  for (const auto& f : type.fields) {
    if (f.name == key) return &f;
  }
  for (const auto& f : type.fields) {
    if (f.name.size() == key.size() && strcasecmp(f.name.c_str(), key.c_str()) == 0) return &f;
  }
  return nullptr;
}

}  // namespace

std::string GoValues::String(const std::string& field) const {
  auto it = values_.find(field);
  return it == values_.end() ? std::string() : it->second.get<std::string>();
}
int64_t GoValues::Int(const std::string& field) const {
  auto it = values_.find(field);
  return it == values_.end() ? 0 : it->second.get<int64_t>();
}
bool GoValues::Bool(const std::string& field) const {
  auto it = values_.find(field);
  return it != values_.end() && it->second.get<bool>();
}
std::map<std::string, std::string> GoValues::StringMap(const std::string& field) const {
  auto it = values_.find(field);
  if (it == values_.end()) return {};
  return it->second.get<std::map<std::string, std::string>>();
}

GoDecodeResult GoDecode(std::string_view body, const GoStruct& type) {
  GoDecodeResult result;
  Node root;
  try {
    root = Parser(body).ParseTopLevel();
  } catch (const SyntaxError& e) {
    result.error = e.message;
    return result;
  }
  if (root.kind == Node::kNull) return result;
  if (root.kind != Node::kObject) {
    result.error = std::string("json: cannot unmarshal ") + KindName(root.kind) +
                   " into Go value of type " + type.qualified_name;
    return result;
  }
  auto type_error = [&](const std::string& value, const GoField& f, const char* go_type = nullptr) {
    if (!result.error) {
      result.error = "json: cannot unmarshal " + value + " into Go struct field " + type.name +
                     "." + f.name + " of type " + (go_type ? go_type : TypeName(f.type));
    }
  };
  for (const auto& [key, node] : root.members) {
    const GoField* f = FindField(type, key);
    if (f == nullptr || node.kind == Node::kNull) continue;
    switch (f->type) {
      case GoType::kString:
        if (node.kind == Node::kString) {
          result.values.Set(f->name, node.text);
        } else {
          type_error(KindName(node.kind), *f);
        }
        break;
      case GoType::kBool:
        if (node.kind == Node::kBool) {
          result.values.Set(f->name, node.boolean);
        } else {
          type_error(KindName(node.kind), *f);
        }
        break;
      case GoType::kInt64: {
        if (node.kind != Node::kNumber) {
          type_error(KindName(node.kind), *f);
          break;
        }
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(node.text.c_str(), &end, 10);
        if (errno != 0 || end == nullptr || *end != '\0') {
          type_error("number " + node.text, *f);
        } else {
          result.values.Set(f->name, static_cast<int64_t>(v));
        }
        break;
      }
      case GoType::kStringMap: {
        if (node.kind != Node::kObject) {
          type_error(KindName(node.kind), *f);
          break;
        }
        std::map<std::string, std::string> m;
        for (const auto& [k, v] : node.members) {
          if (v.kind == Node::kString) {
            m[k] = v.text;
          } else if (v.kind == Node::kNull) {
            m[k] = "";
          } else {
            type_error(KindName(v.kind), *f, "string");  // a map element's type
          }
        }
        result.values.Set(f->name, m);
        break;
      }
    }
  }
  return result;
}

std::string GoQuote(std::string_view s) {
  std::string out;
  AppendGoQuoted(out, s);
  return out;
}

void AppendGoQuoted(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  auto plain = [](unsigned char c) {
    return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2;
  };
  if (std::all_of(s.begin(), s.end(),
                  [&](char c) { return plain(static_cast<unsigned char>(c)); })) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
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
      default:
        break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
      continue;
    }
    // U+2028 and U+2029 are escaped by Go for JSONP safety.
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      out += (static_cast<unsigned char>(s[i + 2]) == 0xA8) ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out.push_back(static_cast<char>(c));
  }
  out.push_back('"');
}

namespace {

void Indent(const nlohmann::ordered_json& v, int depth, std::string& out) {
  auto newline = [&](int d) {
    out.push_back('\n');
    out.append(static_cast<size_t>(d), '\t');
  };
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        newline(depth + 1);
        out += GoQuote(it.key());
        out += ": ";
        Indent(it.value(), depth + 1, out);
      }
      newline(depth);
      out.push_back('}');
      return;
    }
    case nlohmann::json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      bool first = true;
      for (const auto& item : v) {
        if (!first) out.push_back(',');
        first = false;
        newline(depth + 1);
        Indent(item, depth + 1, out);
      }
      newline(depth);
      out.push_back(']');
      return;
    }
    case nlohmann::json::value_t::string:
      out += GoQuote(v.get_ref<const std::string&>());
      return;
    default:
      out += v.dump();
      return;
  }
}

}  // namespace

std::string GoIndent(const nlohmann::ordered_json& value) {
  std::string out;
  Indent(value, 0, out);
  return out;
}

}  // namespace flexkit::fakes::convoy
