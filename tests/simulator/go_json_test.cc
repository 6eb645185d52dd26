// Go encoding/json fidelity: json.Marshal(map[string]string) byte for byte,
// Go's field-name folding, the scanner's errors, and string unquoting.
#include "simulator/go_json.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace flexkit::sim {
namespace {

std::string Marshal(const std::map<std::string, std::string>& m,
                    GoEscapeStyle style = GoEscapeStyle::kGo122) {
  return GoMarshalStringMap(m, style);
}

std::string Unquote(const std::string& quoted) { return GoJsonCursor(quoted).ReadString(); }

TEST(SimulatorGoMarshal, EmptyMapIsBraces) { EXPECT_EQ(Marshal({}), "{}"); }

TEST(SimulatorGoMarshal, HtmlCharactersAreEscaped) {
  EXPECT_EQ(Marshal({{"a", "<b>&</b>"}}), R"({"a":"\u003cb\u003e\u0026\u003c/b\u003e"})");
}

TEST(SimulatorGoMarshal, KeysAreEscapedToo) {
  EXPECT_EQ(Marshal({{"<k>", "v"}}), R"({"\u003ck\u003e":"v"})");
}

TEST(SimulatorGoMarshal, LineAndParagraphSeparatorsAreEscaped) {
  EXPECT_EQ(Marshal({{"a", "x\u2028y\u2029z"}}), R"({"a":"x\u2028y\u2029z"})");
}

TEST(SimulatorGoMarshal, InvalidUtf8BytesBecomeReplacementEscapes) {
  EXPECT_EQ(Marshal({{"a", "x\xffy"}}), R"({"a":"x\ufffdy"})");
  EXPECT_EQ(Marshal({{"a", "\xC0\x80"}}), R"({"a":"\ufffd\ufffd"})");            // overlong
  EXPECT_EQ(Marshal({{"a", "\xED\xA0\x80"}}), R"({"a":"\ufffd\ufffd\ufffd"})");  // surrogate
  EXPECT_EQ(Marshal({{"a", "\xE2\x82"}}), R"({"a":"\ufffd\ufffd"})");            // truncated
  EXPECT_EQ(Marshal({{"a", "\xF4\x90\x80\x80"}}), R"({"a":"\ufffd\ufffd\ufffd\ufffd"})");
}

TEST(SimulatorGoMarshal, ValidMultibyteIsKeptRaw) {
  EXPECT_EQ(Marshal({{"a", "é✓😀\xEF\xBF\xBD"}}), "{\"a\":\"é✓😀\xEF\xBF\xBD\"}");
}

TEST(SimulatorGoMarshal, ControlCharacters) {
  EXPECT_EQ(Marshal({{"a", "\n\r\t\x01\x1f\x7f"}}), "{\"a\":\"\\n\\r\\t\\u0001\\u001f\x7f\"}");
}

TEST(SimulatorGoMarshal, BackspaceAndFormFeedDependOnGoVersion) {
  EXPECT_EQ(Marshal({{"a", "\b\f"}}, GoEscapeStyle::kGo122), R"({"a":"\b\f"})");
  EXPECT_EQ(Marshal({{"a", "\b\f"}}, GoEscapeStyle::kBeforeGo122), R"({"a":"\u0008\u000c"})");
}

TEST(SimulatorGoMarshal, QuotesAndBackslashes) {
  EXPECT_EQ(Marshal({{"a", "say \"hi\" \\ /"}}), R"({"a":"say \"hi\" \\ /"})");
}

TEST(SimulatorGoMarshal, KeysSortedBytewise) {
  EXPECT_EQ(Marshal({{"é", "1"}, {"a", "2"}, {"_", "3"}, {"Z", "4"}, {"B", "5"}, {"aa", "6"}}),
            R"({"B":"5","Z":"4","_":"3","a":"2","aa":"6","é":"1"})");
}

TEST(SimulatorGoFold, ExactAndAsciiCaseInsensitive) {
  EXPECT_TRUE(GoFoldEquals("status", "status"));
  EXPECT_TRUE(GoFoldEquals("STATUS", "status"));
  EXPECT_TRUE(GoFoldEquals("volumename", "volumeName"));
  EXPECT_FALSE(GoFoldEquals("status_", "status"));
  EXPECT_FALSE(GoFoldEquals("statuş", "status"));
}

TEST(SimulatorGoFold, KelvinAndLongSFoldIntoAscii) {
  EXPECT_TRUE(
      GoFoldEquals("\xE2\x84\xAA"
                   "EY",
                   "key"));                              // KELVIN SIGN
  EXPECT_TRUE(GoFoldEquals("\xC5\xBFtatus", "status"));  // LATIN SMALL LETTER LONG S
}

TEST(SimulatorGoScanner, AcceptsOneValueWithSpace) {
  EXPECT_EQ(GoJsonSyntaxError(" {\"a\":[1,-2.5e+3,true,false,null,\"x\"]} \n"), std::nullopt);
  EXPECT_EQ(GoJsonSyntaxError("0"), std::nullopt);
  EXPECT_EQ(GoJsonSyntaxError("-0.0E-0"), std::nullopt);
}

TEST(SimulatorGoScanner, ErrorsArePhrasedAsGo) {
  EXPECT_EQ(GoJsonSyntaxError(""), "unexpected end of JSON input");
  EXPECT_EQ(GoJsonSyntaxError("{} x"), "invalid character 'x' after top-level value");
  EXPECT_EQ(GoJsonSyntaxError("[1,]"), "invalid character ']' looking for beginning of value");
  EXPECT_EQ(GoJsonSyntaxError("fals"), "unexpected end of JSON input");
  EXPECT_EQ(GoJsonSyntaxError("nulL"), "invalid character 'L' in literal null (expecting 'l')");
}

TEST(SimulatorGoQuoteChar, MatchesStrconvQuote) {
  EXPECT_EQ(GoQuoteChar('a'), "'a'");
  EXPECT_EQ(GoQuoteChar('\''), "'\\''");
  EXPECT_EQ(GoQuoteChar('"'), "'\"'");
  EXPECT_EQ(GoQuoteChar('\n'), "'\\n'");
  EXPECT_EQ(GoQuoteChar(0x01), "'\\x01'");
  EXPECT_EQ(GoQuoteChar(0x85), "'\\u0085'");
  EXPECT_EQ(GoQuoteChar(0xEF), "'\xC3\xAF'");
}

TEST(SimulatorGoUnquote, EscapesAndSurrogates) {
  EXPECT_EQ(Unquote(R"("a\u00e9\n\/")"), "aé\n/");
  EXPECT_EQ(Unquote(R"("\ud83d\ude00")"), "😀");
  EXPECT_EQ(Unquote(R"("\udc00x")"), "\xEF\xBF\xBDx");
  EXPECT_EQ(Unquote("\"a\xFF\""), "a\xEF\xBF\xBD");
}

// Marshal always yields valid JSON, and what it decodes to is a fixpoint:
// once invalid UTF-8 has become U+FFFD, encoding and decoding lose nothing.
RC_GTEST_PROP(SimulatorGoMarshalProperty, DecodedTextIsAFixpoint, (std::string value)) {
  std::string once = GoQuoteString(value, GoEscapeStyle::kGo122);
  RC_ASSERT(GoJsonSyntaxError(once) == std::nullopt);
  std::string decoded = Unquote(once);
  RC_ASSERT(Unquote(GoQuoteString(decoded, GoEscapeStyle::kGo122)) == decoded);
}

RC_GTEST_PROP(SimulatorGoMarshalProperty, ValidUtf8RoundTrips, (std::u32string runes)) {
  std::string value;
  for (char32_t r : runes) {
    r %= 0x110000;
    if (r >= 0xD800 && r < 0xE000) r = 'x';
    AppendUtf8(value, r);
  }
  RC_ASSERT(Unquote(GoQuoteString(value, GoEscapeStyle::kBeforeGo122)) == value);
}

RC_GTEST_PROP(SimulatorGoMarshalProperty, OutputHasNoRawHtmlOrControlBytes,
              (std::map<std::string, std::string> map)) {
  std::string out = GoMarshalStringMap(map, GoEscapeStyle::kGo122);
  for (unsigned char c : out) {
    RC_ASSERT(c >= 0x20);
    RC_ASSERT(c != '<' && c != '>' && c != '&');
  }
}

}  // namespace
}  // namespace flexkit::sim
