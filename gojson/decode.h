#pragma once
// Go encoding/json decoding: json.Unmarshal and json.Decoder.Decode into
// structs without json tags, as kubelet reads a driver's reply and Convoy
// reads a request body.
//
// Two levels. GoJsonCursor walks text the scanner accepted, for decoders that
// need Go's exact order of checks (kubelet's DriverStatus). GoDecode is
// Decoder.Decode into a flat struct of strings, int64s, bools and
// map[string]string described by a GoStruct.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gojson/scanner.h"

namespace flexkit::gojson {

// Go's field-name matching (Go 1.21+ foldName): exact first, else both names
// folded (ASCII upper-cased, other runes ToUpper(ToLower(r))) are equal.
// `field_name` is ASCII, as every Go field modelled here is: then K (U+212A)
// matches k, ſ (U+017F) matches s, and İ (U+0130) and ı (U+0131) match i.
bool GoFoldEquals(std::string_view json_key, std::string_view field_name);

enum class GoJsonKind { kNull, kBool, kNumber, kString, kArray, kObject };
const char* GoJsonKindName(GoJsonKind kind);  // "string", "number", ... as in Go errors

// A cursor over text that the scanner accepted (GoJsonSyntaxError, or the
// value of GoJsonReadValue). Never fails: callers check Kind() before reading.
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

 private:
  friend class StructDecoder;
  std::map<std::string, std::string> strings_;
  std::map<std::string, int64_t> ints_;
  std::map<std::string, bool> bools_;
  std::map<std::string, std::map<std::string, std::string>> maps_;
};

struct GoDecodeResult {
  GoValues values;
  std::optional<std::string> error;  // Go's error text when decoding failed
};

// json.NewDecoder(body).Decode(&v) for a struct without json tags: one value
// is read and anything after it ignored; keys match fields by GoFoldEquals
// (the first field in declaration order wins), the last duplicate wins,
// unknown keys are ignored; null leaves a field as it is (a map becomes nil);
// a map field seen twice is merged, as Go decodes into the existing map. A
// wrong type does not stop decoding: the first such error is reported, e.g.
// "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Size
// of type int64", and "json: cannot unmarshal array into Go value of type
// api.VolumeCreateRequest" for a value that is not an object.
GoDecodeResult GoDecode(std::string_view body, const GoStruct& type);

}  // namespace flexkit::gojson
