#pragma once
// Go encoding/json encoding: json.Marshal of strings and map[string]string,
// and json.MarshalIndent(v, "", "\t") of a value built in Go field order.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace flexkit::gojson {

// The Go version matters for two bytes: Go 1.22 started writing \b and \f
// instead of \u0008 and \u000c. Convoy v0.5.2 was built before that.
enum class GoEscapeStyle { kBeforeGo122, kGo122 };

// json.Marshal of a Go string: quoted, HTML-safe (<, >, & as \u003c...),
// U+2028 and U+2029 escaped, invalid UTF-8 bytes each replaced by \ufffd.
std::string GoQuote(std::string_view s, GoEscapeStyle style = GoEscapeStyle::kBeforeGo122);
// The same, appended to `out` (the hot path of large listings).
void AppendGoQuoted(std::string& out, std::string_view s,
                    GoEscapeStyle style = GoEscapeStyle::kBeforeGo122);

// json.Marshal(map[string]string): keys sorted bytewise, compact.
std::string GoMarshalStringMap(const std::map<std::string, std::string>& map, GoEscapeStyle style);

// json.MarshalIndent(v, "", "\t") of a value built in Go field order (use
// nlohmann::ordered_json and insert in order): tab indentation, "key": value,
// empty objects and arrays as {} and [], no trailing newline. Numbers are
// written as nlohmann writes them, which is Go's form for integers.
std::string GoIndent(const nlohmann::ordered_json& value,
                     GoEscapeStyle style = GoEscapeStyle::kBeforeGo122);

}  // namespace flexkit::gojson
