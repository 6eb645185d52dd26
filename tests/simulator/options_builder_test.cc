// The options map kubelet builds for a verb (reference §4): user options
// over kubelet's keys, read-only, mount-only keys, Go's JSON escaping and
// base64 of secrets.
#include "simulator/options_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "simulator/version_profile.h"
#include "simulator/volume_spec.h"
#include "tests/simulator/test_volumes.h"

namespace flexkit::sim {
namespace {

using ::flexkit::sim::testing::Pv1;

TEST(SimulatorOptions, UserOptionsOverrideKubernetesKeys) {
  VolumeSpec spec = Pv1();
  spec.options["kubernetes.io/readwrite"] = "ro";
  spec.options["kubernetes.io/fsType"] = "";
  auto o = BuildOptions(FindProfile("current"), spec, nullptr);
  EXPECT_EQ(o.at("kubernetes.io/readwrite"), "ro");
  EXPECT_EQ(o.at("kubernetes.io/fsType"), "");
}

TEST(SimulatorOptions, ReadOnlyAndEmptyFsType) {
  VolumeSpec spec;
  spec.name = "vol";
  spec.read_only = true;
  EXPECT_EQ(
      OptionsJson(FindProfile("current"), spec, nullptr),
      R"({"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"vol","kubernetes.io/readwrite":"ro"})");
}

TEST(SimulatorOptions, NoSecretsPodInfoOrFsGroupWithoutMountExtras) {
  auto o = BuildOptions(FindProfile("current"), Pv1(), nullptr);
  for (const auto& [key, value] : o) {
    EXPECT_EQ(key.find("secret"), std::string::npos) << key;
    EXPECT_EQ(key.find("pod."), std::string::npos) << key;
    EXPECT_EQ(key.find("FsGroup"), std::string::npos) << key;
  }
}

TEST(SimulatorOptions, ValuesNeedingEscapesAreByteExact) {
  VolumeSpec spec;
  spec.name = "v";
  spec.options = {
      {"a&b", "<x>"},          {"quote", "say \"hi\"\\"}, {"ctl", std::string("\b\f\n\x01", 4)},
      {"sep", "\u2028\u2029"}, {"bad", "\xff"},           {"uni", "é😀"}};
  EXPECT_EQ(OptionsJson(FindProfile("current"), spec, nullptr),
            "{\"a\\u0026b\":\"\\u003cx\\u003e\",\"bad\":\"\\ufffd\",\"ctl\":\"\\b\\f\\n\\u0001\","
            "\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pvOrVolumeName\":\"v\","
            "\"kubernetes.io/readwrite\":\"rw\",\"quote\":\"say \\\"hi\\\"\\\\\","
            "\"sep\":\"\\u2028\\u2029\",\"uni\":\"é😀\"}");
  EXPECT_NE(OptionsJson(FindProfile("1.15"), spec, nullptr).find(R"("ctl":"\u0008\u000c\n\u0001")"),
            std::string::npos);
}

TEST(SimulatorOptions, SecretsArePaddedBase64OfRawBytes) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64(std::string("\xff\x00\n", 3)), "/wAK");
}

}  // namespace
}  // namespace flexkit::sim
