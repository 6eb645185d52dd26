#include "driver/sdk/status.h"

#include <gtest/gtest.h>

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
