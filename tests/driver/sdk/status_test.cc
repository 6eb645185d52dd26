#include "driver/sdk/status.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>

namespace flexvolume {
namespace {

TEST(RenderReply, SuccessIsOneCompactLine) {
  EXPECT_EQ(RenderReply(Succeed()), "{\"status\":\"Success\"}\n");
}

TEST(RenderReply, NotSupportedSpellingIsExact) {
  EXPECT_EQ(RenderReply(NotSupported()), "{\"status\":\"Not supported\"}\n");
}

TEST(RenderReply, FailureCarriesItsMessage) {
  EXPECT_EQ(RenderReply(Fail("attach vol-1: boom")),
            "{\"status\":\"Failure\",\"message\":\"attach vol-1: boom\"}\n");
}

TEST(RenderReply, CapabilitiesAreAlwaysFiveBooleans) {
  DriverStatus s = Succeed();
  s.capabilities = Capabilities{};
  s.capabilities->attach = false;
  auto j = nlohmann::json::parse(RenderReply(s));
  const auto& caps = j.at("capabilities");
  ASSERT_EQ(caps.size(), 5u);
  for (const char* key :
       {"attach", "selinuxRelabel", "supportsMetrics", "fsGroup", "requiresFSResize"}) {
    ASSERT_TRUE(caps.contains(key)) << key;
    EXPECT_TRUE(caps.at(key).is_boolean()) << key;
  }
  EXPECT_FALSE(caps.at("attach").get<bool>());
  EXPECT_TRUE(caps.at("selinuxRelabel").get<bool>());
  EXPECT_FALSE(caps.at("supportsMetrics").get<bool>());
  EXPECT_TRUE(caps.at("fsGroup").get<bool>());
  EXPECT_TRUE(caps.at("requiresFSResize").get<bool>());
}

TEST(RenderReply, AttachedFalseIsRenderedNotOmitted) {
  DriverStatus s = Succeed();
  s.attached = false;
  EXPECT_EQ(RenderReply(s), "{\"status\":\"Success\",\"attached\":false}\n");
}

TEST(RenderReply, DeviceAndVolumeName) {
  DriverStatus s = Succeed();
  s.device = "/dev/xvdf";
  s.volume_name = "pv-1";
  EXPECT_EQ(RenderReply(s),
            "{\"status\":\"Success\",\"device\":\"/dev/xvdf\",\"volumeName\":\"pv-1\"}\n");
}

TEST(RenderReply, InvalidUtf8InAMessageIsReplacedNotThrown) {
  std::string reply = RenderReply(Fail(std::string("bad \xff path")));
  EXPECT_NO_THROW(nlohmann::json::parse(reply));
  EXPECT_EQ(reply.back(), '\n');
  EXPECT_EQ(reply.find('\n'), reply.size() - 1);
}

TEST(RenderReply, ControlCharactersAreEscapedSoTheReplyStaysOneLine) {
  std::string reply = RenderReply(Fail("line1\nline2\ttab \"quoted\""));
  EXPECT_EQ(reply.find('\n'), reply.size() - 1);
  EXPECT_EQ(nlohmann::json::parse(reply).at("message"), "line1\nline2\ttab \"quoted\"");
}

// RenderReply writes JSON by hand, to keep `init` as cheap as a process start;
// nlohmann::json with error_handler_t::replace is the oracle for every byte
// string, including control characters and ill-formed or cut-off UTF-8, so the
// hand-written escaping cannot drift from what a JSON library writes.
std::string AsNlohmannRenders(const DriverStatus& s) {
  nlohmann::ordered_json j;
  j["status"] = s.status;
  if (!s.message.empty()) j["message"] = s.message;
  if (s.device) j["device"] = *s.device;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

RC_GTEST_PROP(RenderReply, EscapesEveryByteStringAsNlohmannJsonDoes, ()) {
  // Bytes biased towards the interesting ones: controls, quotes, and the
  // lead and continuation bytes of every UTF-8 length.
  const auto byte = rc::gen::oneOf(
      rc::gen::arbitrary<char>(), rc::gen::element<char>('"', '\\', '\n', '\x7f', '\x01'),
      rc::gen::map(rc::gen::inRange(0x80, 0x100), [](int b) { return static_cast<char>(b); }),
      rc::gen::element<char>('\xc2', '\xe0', '\xed', '\xef', '\xf0', '\xf4', '\xbf', '\x80', '\x9f',
                             '\xa0', '\x8f', '\x90'));
  DriverStatus s = Fail(*rc::gen::container<std::string>(byte));
  s.device = *rc::gen::container<std::string>(byte);
  RC_ASSERT(RenderReply(s) == AsNlohmannRenders(s));
}

TEST(RenderReply, KeepsWellFormedUtf8AndReplacesEachIllFormedSequence) {
  EXPECT_EQ(RenderReply(Fail("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe")),
            "{\"status\":\"Failure\",\"message\":\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe\"}\n");
  // An overlong lead, a surrogate, a cut-off sequence.
  EXPECT_EQ(RenderReply(Fail("\xc0\xaf|\xed\xa0\x80|\xe2\x82")),
            "{\"status\":\"Failure\",\"message\":\"\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf"
            "\xbd\xef\xbf\xbd|\xef\xbf\xbd\"}\n");
  EXPECT_EQ(RenderReply(Fail(std::string("\x01\x1f\x7f", 3))),
            "{\"status\":\"Failure\",\"message\":\"\\u0001\\u001f\x7f\"}\n");
}

TEST(ExitCodeFor, AgreesWithStatus) {
  EXPECT_EQ(ExitCodeFor(Succeed()), 0);
  EXPECT_EQ(ExitCodeFor(NotSupported()), 0);
  EXPECT_EQ(ExitCodeFor(Fail("x")), 1);
  DriverStatus odd;
  odd.status = "success";  // not exactly "Success": kubelet says failure
  EXPECT_EQ(ExitCodeFor(odd), 1);
  EXPECT_TRUE(odd.IsFailure());
}

}  // namespace
}  // namespace flexvolume
