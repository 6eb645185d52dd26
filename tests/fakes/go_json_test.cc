// Go encoding/json behaviour the Convoy API depends on: decoding errors by
// their exact texts, key matching, and MarshalIndent's layout and escaping.
#include "fakes/convoy/go_json.h"

#include <gtest/gtest.h>

#include "fakes/convoy/request_types.h"

namespace flexkit::fakes::convoy {
namespace {

std::string ErrorOf(std::string_view body) {
  auto r = GoDecode(body, api::kVolumeCreate);
  return r.error.value_or("ok");
}

TEST(FakesGoJson, EmptyOrBlankBodyIsEof) {
  EXPECT_EQ("EOF", ErrorOf(""));
  EXPECT_EQ("EOF", ErrorOf("  \n\t"));
}

TEST(FakesGoJson, TruncatedBodyIsUnexpectedEof) {
  EXPECT_EQ("unexpected EOF", ErrorOf("{\"Name\":"));
  EXPECT_EQ("unexpected EOF", ErrorOf("{\"Name\": \"ab"));
}

TEST(FakesGoJson, SyntaxErrorsUseGoTexts) {
  EXPECT_EQ("invalid character 'h' looking for beginning of value", ErrorOf("hello"));
  EXPECT_EQ("invalid character '\\'' looking for beginning of object key string",
            ErrorOf("{'Name':'x'}"));
  EXPECT_EQ("invalid character 'o' in literal null (expecting 'u')", ErrorOf("nope"));
  EXPECT_EQ("invalid character '}' after object key", ErrorOf("{\"a\"}"));
  EXPECT_EQ("invalid character ']' after object key:value pair", ErrorOf("{\"a\":1]"));
}

TEST(FakesGoJson, WrongTypesNameTheStructFieldAndType) {
  EXPECT_EQ(
      "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Size of type int64",
      ErrorOf("{\"Size\":\"1G\"}"));
  EXPECT_EQ(
      "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Verbose of type bool",
      ErrorOf("{\"Verbose\":\"true\"}"));
  EXPECT_EQ(
      "json: cannot unmarshal number 1.5 into Go struct field VolumeCreateRequest.Size of type "
      "int64",
      ErrorOf("{\"Size\":1.5}"));
  EXPECT_EQ("json: cannot unmarshal array into Go value of type api.VolumeCreateRequest",
            ErrorOf("[1]"));
  EXPECT_EQ("json: cannot unmarshal string into Go value of type api.VolumeCreateRequest",
            ErrorOf("\"x\""));
  auto plugin = GoDecode("{\"Name\":\"a\",\"Opts\":{\"size\":10}}", api::kPluginRequest);
  EXPECT_EQ("json: cannot unmarshal number into Go struct field pluginRequest.Opts of type string",
            *plugin.error);
}

TEST(FakesGoJson, KeysMatchCaseInsensitivelyUnknownKeysIgnoredLastWins) {
  auto r = GoDecode("{\"name\":\"a\",\"NAME\":\"b\",\"verbose\":true,\"Foo\":[1],\"size\":7}",
                    api::kVolumeCreate);
  ASSERT_FALSE(r.error);
  EXPECT_EQ("b", r.values.String("Name"));
  EXPECT_TRUE(r.values.Bool("Verbose"));
  EXPECT_EQ(7, r.values.Int("Size"));
}

TEST(FakesGoJson, NullAndMissingKeysLeaveZeroValuesAndTrailingDataIsIgnored) {
  auto r = GoDecode("{\"Name\":null}{\"Name\":\"two\"}", api::kVolumeCreate);
  ASSERT_FALSE(r.error);
  EXPECT_EQ("", r.values.String("Name"));
  EXPECT_EQ(0, r.values.Int("Size"));
  EXPECT_FALSE(GoDecode("null", api::kVolumeCreate).error);
}

TEST(FakesGoJson, IndentIsTabsWithGoEscaping) {
  nlohmann::ordered_json j = {{"Name", "a<b>&c"},
                              {"List", {"x"}},
                              {"Empty", nlohmann::ordered_json::object()},
                              {"Null", nullptr}};
  EXPECT_EQ(
      "{\n\t\"Name\": \"a\\u003cb\\u003e\\u0026c\",\n\t\"List\": [\n\t\t\"x\"\n\t],\n\t\"Empty\": "
      "{},\n\t\"Null\": null\n}",
      GoIndent(j));
}

}  // namespace
}  // namespace flexkit::fakes::convoy
