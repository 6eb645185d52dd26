#include "gojson/encode.h"

#include "gojson/utf8.h"

namespace flexkit::gojson {
namespace {

// What Go writes as it is: printable ASCII except the quote, the backslash
// and the HTML characters.
bool IsPlainAscii(unsigned char b) {
  return b >= 0x20 && b < 0x80 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&';
}

void Indent(const nlohmann::ordered_json& v, int depth, GoEscapeStyle style, std::string& out) {
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<std::size_t>(d), '\t');
  };
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        AppendGoQuoted(out, it.key(), style);
        out += ": ";
        Indent(it.value(), depth + 1, style, out);
      }
      newline(depth);
      out += '}';
      return;
    }
    case nlohmann::json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        Indent(item, depth + 1, style, out);
      }
      newline(depth);
      out += ']';
      return;
    }
    case nlohmann::json::value_t::string:
      AppendGoQuoted(out, v.get_ref<const std::string&>(), style);
      return;
    default:
      out += v.dump();
      return;
  }
}

}  // namespace

void AppendGoQuoted(std::string& out, std::string_view s, GoEscapeStyle style) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    // Runs of plain bytes are copied whole.
    std::size_t run = i;
    while (run < s.size() && IsPlainAscii(static_cast<unsigned char>(s[run]))) ++run;
    out.append(s.substr(i, run - i));
    i = run;
    if (i == s.size()) break;
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
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
  out += '"';
}

std::string GoQuote(std::string_view s, GoEscapeStyle style) {
  std::string out;
  AppendGoQuoted(out, s, style);
  return out;
}

std::string GoMarshalStringMap(const std::map<std::string, std::string>& map, GoEscapeStyle style) {
  // std::map<std::string> orders keys bytewise (char_traits compares as
  // unsigned char), exactly as Go's sort of the map keys.
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!first) out += ',';
    first = false;
    AppendGoQuoted(out, key, style);
    out += ':';
    AppendGoQuoted(out, value, style);
  }
  return out + "}";
}

std::string GoIndent(const nlohmann::ordered_json& value, GoEscapeStyle style) {
  std::string out;
  Indent(value, 0, style, out);
  return out;
}

}  // namespace flexkit::gojson
