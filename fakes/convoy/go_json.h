#pragma once
// JSON as Convoy's Go code reads and writes it.
//
// Reading follows encoding/json's Decoder.Decode into a struct without json
// tags: one value is read and anything after it ignored, keys match fields
// case-insensitively (exact match first), unknown keys are ignored, null and
// missing keys leave the zero value, and errors carry Go's exact texts
// ("EOF", "unexpected EOF", "invalid character 'h' looking for beginning of
// value", "json: cannot unmarshal string into Go struct field X.Y of type T").
//
// Writing follows json.MarshalIndent(v, "", "\t"): tab indentation, struct
// fields in declaration order (use nlohmann::ordered_json and insert in
// order), "<>&" escaped as \u003c \u003e \u0026, no trailing newline.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flexkit::fakes::convoy {

enum class GoType { kString, kInt64, kBool, kStringMap };

struct GoField {
  std::string name;  // the Go field name, which is also its JSON key
  GoType type;
};

struct GoStruct {
  std::string qualified_name;  // e.g. "api.VolumeCreateRequest" (top-level errors)
  std::string name;            // e.g. "VolumeCreateRequest" (field errors)
  std::vector<GoField> fields;
};

// The decoded fields; a field absent here has its zero value.
class GoValues {
 public:
  std::string String(const std::string& field) const;
  int64_t Int(const std::string& field) const;
  bool Bool(const std::string& field) const;
  std::map<std::string, std::string> StringMap(const std::string& field) const;
  void Set(const std::string& field, nlohmann::json value) { values_[field] = std::move(value); }

 private:
  std::map<std::string, nlohmann::json> values_;
};

struct GoDecodeResult {
  GoValues values;
  std::optional<std::string> error;  // Go's error text when decoding failed
};

GoDecodeResult GoDecode(std::string_view body, const GoStruct& type);

// json.MarshalIndent(v, "", "\t") of a value built in Go field order.
std::string GoIndent(const nlohmann::ordered_json& value);
// json.Marshal of a string (quoted, Go escaping), as Go embeds it in output.
std::string GoQuote(std::string_view s);
// The same, appended to `out` (the hot path of large listings).
void AppendGoQuoted(std::string& out, std::string_view s);

}  // namespace flexkit::fakes::convoy
