#pragma once
// The byte classes of Go's JSON grammar (encoding/json scanner.go), shared
// by the scanner and the decoder.
namespace flexkit::gojson {

// JSON whitespace: space, tab, newline, carriage return (no other).
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// The value of a hexadecimal digit (IsHexDigit(c) holds).
inline int HexDigitValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace flexkit::gojson
