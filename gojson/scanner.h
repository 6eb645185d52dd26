#pragma once
// Go encoding/json's scanner (scanner.go): where one JSON value ends, and the
// syntax errors phrased exactly as Go phrases them. Iterative, so Go's
// 10000 levels of nesting cost no stack.
#include <optional>
#include <string>
#include <string_view>

namespace flexkit::gojson {

// json.Unmarshal's checkValid: nullopt if `input` is exactly one JSON value
// surrounded by optional whitespace (space, tab, CR, LF), otherwise Go's
// error text: "unexpected end of JSON input", "invalid character 'x' after
// top-level value", "invalid character ' ' in literal true (expecting 'e')"
// (input ending inside a literal, number or escape: Go feeds a space at
// EOF), "invalid character '[' exceeded max depth" (nesting deeper than
// 10000).
std::optional<std::string> GoJsonSyntaxError(std::string_view input);

// json.Decoder.Decode's reading of one value from a stream: leading
// whitespace skipped, the first value taken, whatever follows it ignored.
// Errors: "EOF" (nothing but whitespace), "unexpected EOF" (the stream ends
// inside the value), otherwise the scanner's "invalid character ..." texts.
struct GoJsonStreamValue {
  std::string_view value;            // the first value's text, when no error
  std::optional<std::string> error;  // Go's error text
};
GoJsonStreamValue GoJsonReadValue(std::string_view stream);

// Go's quoteChar for the offending byte in a syntax error: strconv.Quote of
// the byte's Latin-1 rune in single quotes ('x', '\n', '\\', '\x01',
// '\u0085', 'ï' for 0xEF).
std::string GoQuoteChar(unsigned char c);

}  // namespace flexkit::gojson
