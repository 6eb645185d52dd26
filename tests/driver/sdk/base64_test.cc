#include "driver/sdk/base64.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <utility>

namespace flexvolume {
namespace {

TEST(Base64, DecodesGoStdEncodingVectors) {
  std::string out;
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"Zg==", "f"},
                                                         {"Zm8=", "fo"},
                                                         {"Zm9v", "foo"},
                                                         {"Zm9vYg==", "foob"},
                                                         {"Zm9vYmE=", "fooba"},
                                                         {"Zm9vYmFy", "foobar"},
                                                         {"+/+/", "\xfb\xff\xbf"}};
  for (auto [in, want] : vectors) {
    ASSERT_TRUE(Base64Decode(in, &out)) << in;
    EXPECT_EQ(out, want) << in;
  }
}

TEST(Base64, SkipsLineBreaksLikeGo) {
  std::string out;
  ASSERT_TRUE(Base64Decode("Zm9v\nYmFy\r\n", &out));
  EXPECT_EQ(out, "foobar");
}

TEST(Base64, RejectsWhatGoStdEncodingRejects) {
  std::string out;
  for (const char* in :
       {"Zg", "Zg=", "Zm9vY", "Z===", "=Zm9", "Zg==Zg==", "-_-_", "Zm 9", "Zm9*"}) {
    EXPECT_FALSE(Base64Decode(in, &out)) << in;
  }
}

RC_GTEST_PROP(Base64Property, EncodeThenDecodeIsIdentity, (const std::string& bytes)) {
  std::string decoded;
  RC_ASSERT(Base64Decode(Base64Encode(bytes), &decoded));
  RC_ASSERT(decoded == bytes);
}

}  // namespace
}  // namespace flexvolume
