#pragma once
// Go encoding/json, as kubelet links it, for the two codecs the protocol
// needs. Decoding side: Go's checkValid scanner (the whole input is one JSON
// value, or an error phrased as Go phrases it), and a cursor that walks a
// validated document the way decode.go does. Encoding side: json.Marshal of
// a map[string]string, byte for byte.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace flexkit::sim {

// The Go scanner's verdict on `input`: nullopt if it is exactly one JSON value
// surrounded by optional whitespace (space, tab, CR, LF), otherwise Go's error
// text, e.g. "unexpected end of JSON input", "invalid character 'x' after
// top-level value". Nesting deeper than 10000 is "exceeded max depth".
std::optional<std::string> GoJsonSyntaxError(std::string_view input);

// Go's strconv-style quoting of one offending byte in scanner errors ('x',
// '\n', 'ï' for 0xEF since Go converts the byte to a rune).
std::string GoQuoteChar(unsigned char c);

// Go's field-name matching rule: exact first, else case-insensitive with
// Unicode simple folding of ASCII letters plus K (U+212A) ~ k and ſ (U+017F)
// ~ s, which is what Go's foldName accepts for ASCII-named fields.
bool GoFoldEquals(std::string_view json_key, std::string_view field_name);

enum class GoJsonKind { kNull, kBool, kNumber, kString, kArray, kObject };
const char* GoJsonKindName(GoJsonKind kind);  // "string", "number", ... as in Go errors

// A cursor over text that GoJsonSyntaxError accepted. Never fails: callers
// check Kind() before reading.
class GoJsonCursor {
 public:
  explicit GoJsonCursor(std::string_view valid_json) : text_(valid_json) {}
  GoJsonKind Kind();               // kind of the value at the cursor
  std::string ReadString();        // unquoted: \u escapes, surrogates, bad UTF-8 -> U+FFFD
  std::string_view ReadLiteral();  // number, true, false or null text
  void SkipValue();                // any value, iteratively (no recursion)
  bool EnterObject();              // consumes '{'; true if there is a first member
  bool NextMember();               // after a member value: consumes ',' -> true, '}' -> false
  std::string ReadKeyAndColon();   // at a key: its unquoted text, cursor on the value
 private:
  void SkipSpace();
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The Go version matters for two bytes: Go 1.22 started writing \b and \f
// instead of \u0008 and \u000c.
enum class GoEscapeStyle { kBeforeGo122, kGo122 };

// json.Marshal of a Go string: quoted, HTML-safe (<, >, & as \u003c...),
// U+2028 and U+2029 escaped, invalid UTF-8 bytes each replaced by \ufffd.
std::string GoQuoteString(std::string_view value, GoEscapeStyle style);

// json.Marshal(map[string]string): keys sorted bytewise, compact.
std::string GoMarshalStringMap(const std::map<std::string, std::string>& map, GoEscapeStyle style);

// Go's utf8.DecodeRune: the code point at s[0..] and its length; an invalid
// or truncated sequence is (U+FFFD, 1).
std::pair<char32_t, std::size_t> GoDecodeRune(std::string_view s);
void AppendUtf8(std::string& out, char32_t rune);

}  // namespace flexkit::sim
