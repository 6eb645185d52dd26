#include "driver/sdk/options.h"

#include <gtest/gtest.h>

#include "driver/sdk/secrets.h"

namespace flexvolume {
namespace {

class OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { SecretRegistry::Global().ClearForTesting(); }
};

TEST_F(OptionsTest, ParsesAnObjectOfStrings) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions(R"({"kubernetes.io/fsType":"ext4","a b":"c \"d\"","u":"\u00e9\u003c"})",
                           &o, &err))
      << err;
  EXPECT_EQ(o.at("kubernetes.io/fsType"), "ext4");
  EXPECT_EQ(o.at("a b"), "c \"d\"");
  EXPECT_EQ(o.at("u"), "\xc3\xa9<");
}

TEST_F(OptionsTest, EmptyFsTypeIsAccepted) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions(R"({"kubernetes.io/fsType":""})", &o, &err));
  EXPECT_EQ(o.at("kubernetes.io/fsType"), "");
}

TEST_F(OptionsTest, LastDuplicateWinsAsInGo) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions(R"({"k":"1","k":"2"})", &o, &err));
  EXPECT_EQ(o.at("k"), "2");
}

TEST_F(OptionsTest, NonStringValueIsAnErrorNamingTheKey) {
  for (const char* text : {R"({"size":10})", R"({"size":true})", R"({"size":null})",
                           R"({"size":["a"]})", R"({"size":{"x":"y"}})"}) {
    Options o{{"keep", "me"}};
    std::string err;
    EXPECT_FALSE(ParseOptions(text, &o, &err)) << text;
    EXPECT_NE(err.find("\"size\" must be a string"), std::string::npos) << err;
    EXPECT_EQ(o.size(), 1u) << "output changed on error";
  }
}

TEST_F(OptionsTest, NonObjectIsAnError) {
  for (const char* text : {"[]", "\"x\"", "1", "null"}) {
    Options o;
    std::string err;
    EXPECT_FALSE(ParseOptions(text, &o, &err)) << text;
    EXPECT_NE(err.find("must be a JSON object"), std::string::npos) << err;
  }
}

TEST_F(OptionsTest, MalformedJsonErrorNeverQuotesTheInput) {
  const std::string text = R"({"kubernetes.io/secret/password":"hunter2hunter2)";
  Options o;
  std::string err;
  EXPECT_FALSE(ParseOptions(text, &o, &err));
  EXPECT_EQ(err.find("hunter2"), std::string::npos) << err;
  EXPECT_NE(err.find("not valid JSON"), std::string::npos) << err;
}

TEST_F(OptionsTest, TrailingGarbageIsMalformed) {
  Options o;
  std::string err;
  EXPECT_FALSE(ParseOptions(R"({"a":"b"} x)", &o, &err));
  EXPECT_FALSE(ParseOptions(R"({"a":"b"}{"c":"d"})", &o, &err));
}

TEST_F(OptionsTest, SecretsAreDecodedInPlace) {
  Options o{{"kubernetes.io/secret/password", "aHVudGVyMg=="}, {"server", "aHVudGVyMg=="}};
  std::string err;
  ASSERT_TRUE(DecodeKubeSecrets(&o, &err)) << err;
  EXPECT_EQ(o.at("kubernetes.io/secret/password"), "hunter2");
  EXPECT_EQ(o.at("server"), "aHVudGVyMg==") << "only secret keys are decoded";
}

TEST_F(OptionsTest, SecretTrailingNewlinesAreTrimmed) {
  // `echo hunter2 | base64` encodes the newline; some tools add one after.
  Options o{{"kubernetes.io/secret/a", "aHVudGVyMgo=\n"},
            {"kubernetes.io/secret/b", "aHVudGVyMg==\r\n"}};
  std::string err;
  ASSERT_TRUE(DecodeKubeSecrets(&o, &err)) << err;
  EXPECT_EQ(o.at("kubernetes.io/secret/a"), "hunter2");
  EXPECT_EQ(o.at("kubernetes.io/secret/b"), "hunter2");
}

TEST_F(OptionsTest, EmptySecretDecodesToEmpty) {
  Options o{{"kubernetes.io/secret/empty", ""}};
  std::string err;
  ASSERT_TRUE(DecodeKubeSecrets(&o, &err)) << err;
  EXPECT_EQ(o.at("kubernetes.io/secret/empty"), "");
}

TEST_F(OptionsTest, InvalidSecretNamesTheKeyOnlyAndChangesNothing) {
  const Options before{{"kubernetes.io/secret/ok", "aHVudGVyMg=="},
                       {"kubernetes.io/secret/token", "not*base64!"}};
  Options o = before;
  std::string err;
  EXPECT_FALSE(DecodeKubeSecrets(&o, &err));
  EXPECT_NE(err.find("kubernetes.io/secret/token"), std::string::npos) << err;
  EXPECT_EQ(err.find("not*base64"), std::string::npos) << err;
  EXPECT_EQ(o, before);
}

TEST_F(OptionsTest, SecretPrefixNeedsTheSlash) {
  Options o{{"kubernetes.io/secretsomething", "###"}};
  std::string err;
  EXPECT_TRUE(DecodeKubeSecrets(&o, &err)) << err;
  EXPECT_EQ(o.at("kubernetes.io/secretsomething"), "###");
}

TEST_F(OptionsTest, DecodedAndEncodedSecretsAreRegisteredForRedaction) {
  Options o{{"kubernetes.io/secret/password", "aHVudGVyMg=="}};
  std::string err;
  ASSERT_TRUE(DecodeKubeSecrets(&o, &err));
  EXPECT_EQ(SecretRegistry::Global().Redact("pw hunter2 b64 aHVudGVyMg=="),
            "pw <redacted> b64 <redacted>");
}

TEST_F(OptionsTest, FsGroupFromEitherSpellingCurrentWins) {
  EXPECT_EQ(FsGroup({{"kubernetes.io/fsGroup", "2000"}}), "2000");
  EXPECT_EQ(FsGroup({{"kubernetes.io/mounterArgs.FsGroup", "3000"}}), "3000");
  EXPECT_EQ(
      FsGroup({{"kubernetes.io/fsGroup", "2000"}, {"kubernetes.io/mounterArgs.FsGroup", "3000"}}),
      "3000");
  EXPECT_EQ(FsGroup({}), std::nullopt);
}

TEST_F(OptionsTest, ReadOnly) {
  EXPECT_TRUE(IsReadOnly({{"kubernetes.io/readwrite", "ro"}}));
  EXPECT_FALSE(IsReadOnly({{"kubernetes.io/readwrite", "rw"}}));
  EXPECT_FALSE(IsReadOnly({}));
}

TEST_F(OptionsTest, RedactedOptionsHidesSecretValuesOnly) {
  Options o{{"kubernetes.io/secret/password", "hunter2"}, {"server", "nfs-1"}};
  const std::string text = RedactedOptions(o);
  EXPECT_EQ(text.find("hunter2"), std::string::npos);
  EXPECT_NE(text.find("\"kubernetes.io/secret/password\":\"<redacted>\""), std::string::npos);
  EXPECT_NE(text.find("\"server\":\"nfs-1\""), std::string::npos);
}

}  // namespace
}  // namespace flexvolume
