// libflexkit_gojson against Go encoding/json: the scanner's error texts
// (json.Unmarshal and json.Decoder.Decode), decoding into structs, field-name
// folding, and json.Marshal / MarshalIndent byte for byte; then properties
// over generated values (round trips, truncation, trailing data, folding).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "gojson/decode.h"
#include "gojson/encode.h"
#include "gojson/utf8.h"

namespace flexkit::gojson {
namespace {

// Convoy's api.VolumeCreateRequest and pluginRequest, as the fake reads them.
const GoStruct kVolumeCreate{"api.VolumeCreateRequest",
                             "VolumeCreateRequest",
                             {{"Name", GoType::kString},
                              {"Size", GoType::kInt64},
                              {"Verbose", GoType::kBool},
                              {"Opts", GoType::kStringMap}}};
const GoStruct kPluginRequest{"main.pluginRequest",
                              "pluginRequest",
                              {{"Name", GoType::kString}, {"Opts", GoType::kStringMap}}};

std::string DecodeError(std::string_view body) {
  return GoDecode(body, kVolumeCreate).error.value_or("ok");
}
std::string Marshal(const std::map<std::string, std::string>& m,
                    GoEscapeStyle style = GoEscapeStyle::kGo122) {
  return GoMarshalStringMap(m, style);
}
std::string Unquote(const std::string& quoted) { return GoJsonCursor(quoted).ReadString(); }

// --- json.Unmarshal's scanner (checkValid) ---

TEST(GoJsonUnmarshalScanner, AcceptsOneValueWithSpace) {
  EXPECT_EQ(GoJsonSyntaxError(" {\"a\":[1,-2.5e+3,true,false,null,\"x\"]} \n"), std::nullopt);
  EXPECT_EQ(GoJsonSyntaxError("0"), std::nullopt);
  EXPECT_EQ(GoJsonSyntaxError("-0.0E-0"), std::nullopt);
}

TEST(GoJsonUnmarshalScanner, ErrorsArePhrasedAsGo) {
  EXPECT_EQ(GoJsonSyntaxError(""), "unexpected end of JSON input");
  EXPECT_EQ(GoJsonSyntaxError(" \n"), "unexpected end of JSON input");
  EXPECT_EQ(GoJsonSyntaxError("{\"a\":\"b"), "unexpected end of JSON input");
  EXPECT_EQ(GoJsonSyntaxError("{} x"), "invalid character 'x' after top-level value");
  EXPECT_EQ(GoJsonSyntaxError("[1,]"), "invalid character ']' looking for beginning of value");
  EXPECT_EQ(GoJsonSyntaxError("nulL"), "invalid character 'L' in literal null (expecting 'l')");
  EXPECT_EQ(GoJsonSyntaxError("01"), "invalid character '1' after top-level value");
  EXPECT_EQ(GoJsonSyntaxError("\"\t\""), "invalid character '\\t' in string literal");
  EXPECT_EQ(GoJsonSyntaxError("\\"), "invalid character '\\\\' looking for beginning of value");
}

// At EOF Go's scanner steps once more with a space: a state that rejects a
// space says so (scanner.go eof()).
TEST(GoJsonUnmarshalScanner, EndInsideALiteralNamesTheImpliedSpace) {
  EXPECT_EQ(GoJsonSyntaxError("fals"), "invalid character ' ' in literal false (expecting 'e')");
  EXPECT_EQ(GoJsonSyntaxError("tru"), "invalid character ' ' in literal true (expecting 'e')");
  EXPECT_EQ(GoJsonSyntaxError("-"), "invalid character ' ' in numeric literal");
  EXPECT_EQ(GoJsonSyntaxError("1."),
            "invalid character ' ' after decimal point in numeric literal");
  EXPECT_EQ(GoJsonSyntaxError("1e+"), "invalid character ' ' in exponent of numeric literal");
  EXPECT_EQ(GoJsonSyntaxError("\"\\"), "invalid character ' ' in string escape code");
  EXPECT_EQ(GoJsonSyntaxError("\"\\u12"),
            "invalid character ' ' in \\u hexadecimal character escape");
}

TEST(GoJsonUnmarshalScanner, NestingDeeperThan10000IsAnError) {
  std::string ok = std::string(10000, '[') + std::string(10000, ']');
  EXPECT_EQ(GoJsonSyntaxError(ok), std::nullopt);
  std::string deep = std::string(10001, '[') + std::string(10001, ']');
  EXPECT_EQ(GoJsonSyntaxError(deep), "invalid character '[' exceeded max depth");
}

TEST(GoJsonQuoteChar, MatchesStrconvQuote) {
  EXPECT_EQ(GoQuoteChar('a'), "'a'");
  EXPECT_EQ(GoQuoteChar('\''), "'\\''");
  EXPECT_EQ(GoQuoteChar('"'), "'\"'");
  EXPECT_EQ(GoQuoteChar('\\'), "'\\\\'");
  EXPECT_EQ(GoQuoteChar('\n'), "'\\n'");
  EXPECT_EQ(GoQuoteChar('\b'), "'\\b'");
  EXPECT_EQ(GoQuoteChar(0x01), "'\\x01'");
  EXPECT_EQ(GoQuoteChar(0x7f), "'\\x7f'");
  EXPECT_EQ(GoQuoteChar(0x85), "'\\u0085'");
  EXPECT_EQ(GoQuoteChar(0xA0), "'\\u00a0'");
  EXPECT_EQ(GoQuoteChar(0xAD), "'\\u00ad'");
  EXPECT_EQ(GoQuoteChar(0xEF), "'\xC3\xAF'");
}

// --- json.Decoder.Decode into a struct ---

TEST(GoJsonDecode, EmptyOrBlankBodyIsEof) {
  EXPECT_EQ("EOF", DecodeError(""));
  EXPECT_EQ("EOF", DecodeError("  \n\t"));
}

TEST(GoJsonDecode, TruncatedBodyIsUnexpectedEof) {
  EXPECT_EQ("unexpected EOF", DecodeError("{\"Name\":"));
  EXPECT_EQ("unexpected EOF", DecodeError("{\"Name\": \"ab"));
  EXPECT_EQ("unexpected EOF", DecodeError("tru"));
}

TEST(GoJsonDecode, SyntaxErrorsUseGoTexts) {
  EXPECT_EQ("invalid character 'h' looking for beginning of value", DecodeError("hello"));
  EXPECT_EQ("invalid character '\\'' looking for beginning of object key string",
            DecodeError("{'Name':'x'}"));
  EXPECT_EQ("invalid character 'o' in literal null (expecting 'u')", DecodeError("nope"));
  EXPECT_EQ("invalid character '}' after object key", DecodeError("{\"a\"}"));
  EXPECT_EQ("invalid character ']' after object key:value pair", DecodeError("{\"a\":1]"));
  EXPECT_EQ("invalid character '\\\\' looking for beginning of value", DecodeError("\\"));
}

TEST(GoJsonDecode, WrongTypesNameTheStructFieldAndType) {
  EXPECT_EQ(
      "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Size of type int64",
      DecodeError("{\"Size\":\"1G\"}"));
  EXPECT_EQ(
      "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Verbose of type bool",
      DecodeError("{\"Verbose\":\"true\"}"));
  EXPECT_EQ(
      "json: cannot unmarshal number 1.5 into Go struct field VolumeCreateRequest.Size of type "
      "int64",
      DecodeError("{\"Size\":1.5}"));
  EXPECT_EQ(
      "json: cannot unmarshal number 9223372036854775808 into Go struct field "
      "VolumeCreateRequest.Size of type int64",
      DecodeError("{\"Size\":9223372036854775808}"));
  EXPECT_EQ("json: cannot unmarshal array into Go value of type api.VolumeCreateRequest",
            DecodeError("[1]"));
  EXPECT_EQ("json: cannot unmarshal string into Go value of type api.VolumeCreateRequest",
            DecodeError("\"x\""));
  auto plugin = GoDecode("{\"Name\":\"a\",\"Opts\":{\"size\":10}}", kPluginRequest);
  EXPECT_EQ("json: cannot unmarshal number into Go struct field pluginRequest.Opts of type string",
            *plugin.error);
}

TEST(GoJsonDecode, TheFirstTypeErrorIsReportedAndDecodingGoesOn) {
  auto r = GoDecode("{\"Size\":\"x\",\"Verbose\":1,\"Name\":\"kept\"}", kVolumeCreate);
  EXPECT_EQ(
      "json: cannot unmarshal string into Go struct field VolumeCreateRequest.Size of type int64",
      *r.error);
  EXPECT_EQ("kept", r.values.String("Name"));
}

TEST(GoJsonDecode, KeysMatchCaseInsensitivelyUnknownKeysIgnoredLastWins) {
  auto r =
      GoDecode("{\"name\":\"a\",\"NAME\":\"b\",\"verbose\":true,\"Foo\":[1,{\"x\":2}],\"size\":7}",
               kVolumeCreate);
  ASSERT_FALSE(r.error);
  EXPECT_EQ("b", r.values.String("Name"));
  EXPECT_TRUE(r.values.Bool("Verbose"));
  EXPECT_EQ(7, r.values.Int("Size"));
}

TEST(GoJsonDecode, NullAndMissingKeysLeaveZeroValuesAndTrailingDataIsIgnored) {
  auto r = GoDecode("{\"Name\":null}{\"Name\":\"two\"}", kVolumeCreate);
  ASSERT_FALSE(r.error);
  EXPECT_EQ("", r.values.String("Name"));
  EXPECT_EQ(0, r.values.Int("Size"));
  EXPECT_FALSE(GoDecode("null", kVolumeCreate).error);
  EXPECT_FALSE(GoDecode("{} garbage", kVolumeCreate).error);
}

TEST(GoJsonDecode, MapsMergeWhenRepeatedAndNullMakesThemNil) {
  auto r = GoDecode(R"({"Opts":{"a":"1","b":null},"opts":{"c":"3","a":"x"}})", kVolumeCreate);
  ASSERT_FALSE(r.error);
  std::map<std::string, std::string> want{{"a", "x"}, {"b", ""}, {"c", "3"}};
  EXPECT_EQ(want, r.values.StringMap("Opts"));
  EXPECT_TRUE(GoDecode(R"({"Opts":{"a":"1"},"Opts":null})", kVolumeCreate)
                  .values.StringMap("Opts")
                  .empty());
}

TEST(GoJsonDecode, StringsAreUnquotedAsGoDoes) {
  EXPECT_EQ(Unquote(R"("a\u00e9\n\/")"), "aé\n/");
  EXPECT_EQ(Unquote(R"("\ud83d\ude00")"), "😀");
  EXPECT_EQ(Unquote(R"("\udc00x")"), "\xEF\xBF\xBDx");
  EXPECT_EQ(Unquote(R"("\ud83dx")"), "\xEF\xBF\xBDx");
  EXPECT_EQ(Unquote("\"a\xFF\""), "a\xEF\xBF\xBD");
  EXPECT_EQ("a\xEF\xBF\xBD", GoDecode("{\"Name\":\"a\xFF\"}", kVolumeCreate).values.String("Name"));
}

// --- field-name folding ---

TEST(GoJsonFold, ExactAndAsciiCaseInsensitive) {
  EXPECT_TRUE(GoFoldEquals("status", "status"));
  EXPECT_TRUE(GoFoldEquals("STATUS", "status"));
  EXPECT_TRUE(GoFoldEquals("volumename", "volumeName"));
  EXPECT_FALSE(GoFoldEquals("status_", "status"));
  EXPECT_FALSE(GoFoldEquals("statuş", "status"));
  EXPECT_FALSE(GoFoldEquals("st@tus", "st`tus"));  // not letters: no case
}

TEST(GoJsonFold, SpecialRunesFoldIntoAscii) {
  EXPECT_TRUE(
      GoFoldEquals("\xE2\x84\xAA"
                   "EY",
                   "key"));                              // KELVIN SIGN
  EXPECT_TRUE(GoFoldEquals("\xC5\xBFtatus", "status"));  // LATIN SMALL LETTER LONG S
  EXPECT_TRUE(
      GoFoldEquals("\xC4\xB0"
                   "d",
                   "id"));  // LATIN CAPITAL LETTER I WITH DOT ABOVE
  EXPECT_TRUE(
      GoFoldEquals("\xC4\xB1"
                   "d",
                   "ID"));  // LATIN SMALL LETTER DOTLESS I
  EXPECT_TRUE(GoDecode("{\"\xC5\xBFize\":3}", kVolumeCreate).values.Int("Size") == 3);
}

// --- json.Marshal and MarshalIndent ---

TEST(GoJsonMarshal, EmptyMapIsBraces) { EXPECT_EQ(Marshal({}), "{}"); }

TEST(GoJsonMarshal, HtmlCharactersAreEscapedInKeysAndValues) {
  EXPECT_EQ(Marshal({{"a", "<b>&</b>"}}), R"({"a":"\u003cb\u003e\u0026\u003c/b\u003e"})");
  EXPECT_EQ(Marshal({{"<k>", "v"}}), R"({"\u003ck\u003e":"v"})");
}

TEST(GoJsonMarshal, LineAndParagraphSeparatorsAreEscaped) {
  EXPECT_EQ(Marshal({{"a", "x\u2028y\u2029z"}}), R"({"a":"x\u2028y\u2029z"})");
}

TEST(GoJsonMarshal, InvalidUtf8BytesBecomeReplacementEscapes) {
  EXPECT_EQ(Marshal({{"a", "x\xffy"}}), R"({"a":"x\ufffdy"})");
  EXPECT_EQ(Marshal({{"a", "\xC0\x80"}}), R"({"a":"\ufffd\ufffd"})");            // overlong
  EXPECT_EQ(Marshal({{"a", "\xED\xA0\x80"}}), R"({"a":"\ufffd\ufffd\ufffd"})");  // surrogate
  EXPECT_EQ(Marshal({{"a", "\xE2\x82"}}), R"({"a":"\ufffd\ufffd"})");            // truncated
  EXPECT_EQ(Marshal({{"a", "\xF4\x90\x80\x80"}}), R"({"a":"\ufffd\ufffd\ufffd\ufffd"})");
  EXPECT_EQ(GoQuote("\xE2\x80"), R"("\ufffd\ufffd")");
}

TEST(GoJsonMarshal, ValidMultibyteIsKeptRaw) {
  EXPECT_EQ(Marshal({{"a", "é✓😀\xEF\xBF\xBD"}}), "{\"a\":\"é✓😀\xEF\xBF\xBD\"}");
}

TEST(GoJsonMarshal, ControlCharacters) {
  EXPECT_EQ(Marshal({{"a", "\n\r\t\x01\x1f\x7f"}}), "{\"a\":\"\\n\\r\\t\\u0001\\u001f\x7f\"}");
}

TEST(GoJsonMarshal, BackspaceAndFormFeedDependOnGoVersion) {
  EXPECT_EQ(Marshal({{"a", "\b\f"}}, GoEscapeStyle::kGo122), R"({"a":"\b\f"})");
  EXPECT_EQ(Marshal({{"a", "\b\f"}}, GoEscapeStyle::kBeforeGo122), R"({"a":"\u0008\u000c"})");
  EXPECT_EQ(GoQuote("\b"), R"("\u0008")");  // the default: Go before 1.22
}

TEST(GoJsonMarshal, QuotesAndBackslashes) {
  EXPECT_EQ(Marshal({{"a", "say \"hi\" \\ /"}}), R"({"a":"say \"hi\" \\ /"})");
}

TEST(GoJsonMarshal, KeysSortedBytewise) {
  EXPECT_EQ(Marshal({{"é", "1"}, {"a", "2"}, {"_", "3"}, {"Z", "4"}, {"B", "5"}, {"aa", "6"}}),
            R"({"B":"5","Z":"4","_":"3","a":"2","aa":"6","é":"1"})");
}

TEST(GoJsonMarshalIndent, TabsAndGoEscaping) {
  nlohmann::ordered_json j = {{"Name", "a<b>&c"},
                              {"List", {"x"}},
                              {"Empty", nlohmann::ordered_json::object()},
                              {"None", nlohmann::ordered_json::array()},
                              {"Size", -12},
                              {"Null", nullptr}};
  EXPECT_EQ(
      "{\n\t\"Name\": \"a\\u003cb\\u003e\\u0026c\",\n\t\"List\": [\n\t\t\"x\"\n\t],\n\t\"Empty\": "
      "{},\n\t\"None\": [],\n\t\"Size\": -12,\n\t\"Null\": null\n}",
      GoIndent(j));
}

// --- properties ---

// GoQuote (a string as json.Marshal writes it) always yields valid JSON, and
// what it decodes to is a fixpoint: once invalid UTF-8 has become U+FFFD,
// encoding and decoding lose nothing.
RC_GTEST_PROP(GoJsonProperty, QuotedTextIsValidAndItsDecodingAFixpoint, (std::string value)) {
  std::string once = GoQuote(value, GoEscapeStyle::kGo122);
  RC_ASSERT(GoJsonSyntaxError(once) == std::nullopt);
  std::string decoded = Unquote(once);
  RC_ASSERT(Unquote(GoQuote(decoded, GoEscapeStyle::kBeforeGo122)) == decoded);
}

std::string ValidUtf8(const std::u32string& runes) {
  std::string value;
  for (char32_t r : runes) {
    r %= 0x110000;
    if (r >= 0xD800 && r < 0xE000) r = 'x';
    AppendUtf8(value, r);
  }
  return value;
}

RC_GTEST_PROP(GoJsonProperty, ValidUtf8RoundTrips, (std::u32string runes)) {
  std::string value = ValidUtf8(runes);
  RC_ASSERT(Unquote(GoQuote(value, GoEscapeStyle::kBeforeGo122)) == value);
  RC_ASSERT(Unquote(GoQuote(value, GoEscapeStyle::kGo122)) == value);
}

RC_GTEST_PROP(GoJsonProperty, MarshalledMapsHaveNoRawHtmlOrControlBytes,
              (std::map<std::string, std::string> map)) {
  std::string out = Marshal(map);
  for (unsigned char c : out) {
    RC_ASSERT(c >= 0x20);
    RC_ASSERT(c != '<' && c != '>' && c != '&');
  }
}

// A key spelt with any mix of cases.
std::string RandomCase(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (*rc::gen::arbitrary<bool>())
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

using Utf32Map = std::map<std::u32string, std::u32string>;

// MarshalIndent of a struct value, decoded by Decoder.Decode, with keys in
// any case and any whitespace after the value: the same value comes back.
RC_GTEST_PROP(GoJsonProperty, StructsRoundTripThroughIndentAndDecode,
              (std::u32string name, int64_t size, bool verbose, Utf32Map opts)) {
  std::map<std::string, std::string> opts_utf8;
  for (const auto& [k, v] : opts) opts_utf8[ValidUtf8(k)] = ValidUtf8(v);
  nlohmann::ordered_json j;
  j[RandomCase("Name")] = ValidUtf8(name);
  j[RandomCase("Size")] = size;
  j[RandomCase("Verbose")] = verbose;
  j[RandomCase("Opts")] = opts_utf8;
  std::string body =
      GoIndent(j, *rc::gen::element(GoEscapeStyle::kBeforeGo122, GoEscapeStyle::kGo122)) + "\n";
  RC_ASSERT(GoJsonSyntaxError(body) == std::nullopt);
  GoDecodeResult r = GoDecode(body + "trailing", kVolumeCreate);
  RC_ASSERT(!r.error);
  RC_ASSERT(r.values.String("Name") == ValidUtf8(name));
  RC_ASSERT(r.values.Int("Size") == size);
  RC_ASSERT(r.values.Bool("Verbose") == verbose);
  RC_ASSERT(r.values.StringMap("Opts") == opts_utf8);
}

// Every proper, non-blank prefix of a document is a truncation: the Decoder
// says "unexpected EOF"; Unmarshal says its end-of-input text or names the
// space it implies at EOF. The document itself followed by a letter is
// trailing garbage to Unmarshal and fine for the Decoder.
RC_GTEST_PROP(GoJsonProperty, TruncationAndTrailingDataErrors,
              (std::map<std::string, std::string> map)) {
  std::string doc = Marshal(map);
  const auto cut = *rc::gen::inRange<std::size_t>(1, doc.size());
  std::string prefix = doc.substr(0, cut);
  RC_ASSERT(GoJsonReadValue(prefix).error == std::optional<std::string>("unexpected EOF"));
  std::string whole = GoJsonSyntaxError(prefix).value_or("accepted");
  RC_ASSERT(whole == "unexpected end of JSON input" ||
            whole.rfind("invalid character ' ' ", 0) == 0);
  RC_ASSERT(GoJsonSyntaxError(doc + "x") ==
            std::optional<std::string>("invalid character 'x' after top-level value"));
  RC_ASSERT(GoJsonReadValue(doc + "x").value == doc);
}

// A byte that cannot begin a value is named by GoQuoteChar, by both readers.
RC_GTEST_PROP(GoJsonProperty, BadFirstByteIsNamedAsGoQuotesIt, (unsigned char c)) {
  RC_PRE(std::string_view("{[\"-0123456789tfn \t\r\n").find(static_cast<char>(c)) ==
         std::string_view::npos);
  std::string input(1, static_cast<char>(c));
  std::string want = "invalid character " + GoQuoteChar(c) + " looking for beginning of value";
  RC_ASSERT(GoJsonSyntaxError(input) == std::optional<std::string>(want));
  RC_ASSERT(GoDecode(input, kVolumeCreate).error == std::optional<std::string>(want));
}

// Folding: any case mix of a field name matches it; changing one letter
// into another letter does not.
RC_GTEST_PROP(GoJsonProperty, FoldingIgnoresCaseOnly, ()) {
  std::string name =
      *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::inRange('a', 'z')));
  RC_ASSERT(GoFoldEquals(RandomCase(name), name));
  const auto at = *rc::gen::inRange<std::size_t>(0, name.size());
  std::string other = name;
  other[at] = static_cast<char>('a' + (other[at] - 'a' + *rc::gen::inRange(1, 26)) % 26);
  RC_ASSERT(!GoFoldEquals(RandomCase(other), name));
}

}  // namespace
}  // namespace flexkit::gojson
