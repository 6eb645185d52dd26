#include "conformance/profile.h"

#include <gtest/gtest.h>

namespace flexkit::conform {
namespace {

TEST(Profile, ParsesEveryKey) {
  auto p = ParseProfile(R"(
driver: drv/d
driverName: vendor/d
capabilities: {attach: true, supportsMetrics: true}
attachManagement: kubelet
kubernetes: "1.15"
volumeOptions: {name: "{{unique}}", size: 1Gi}
fsTypes: [ext4, xfs]
secrets: {password: hunter2}
nodes: 2
nodeEnv: {SOCK: "/run/{{node}}.sock"}
privileges: none
timeouts: {default: 5s, waitforattach: 2m, mount: 250ms}
skip: {robustness/concurrent-volumes: "backend is single-threaded"}
install: ["{{driver}}", install, "{{plugin_dir}}"]
fixture: {kind: command, setup: "true", teardown: "true"}
)",
                        "p.yaml", "/base");
  EXPECT_EQ(p.driver, "/base/drv/d");
  EXPECT_EQ(p.driver_name, "vendor/d");
  ASSERT_TRUE(p.capabilities);
  EXPECT_TRUE(p.capabilities->attach);
  EXPECT_TRUE(p.capabilities->supports_metrics);
  EXPECT_TRUE(p.capabilities->selinux_relabel) << "omitted capabilities take kubelet's defaults";
  EXPECT_TRUE(p.kubelet_managed_attach);
  EXPECT_EQ(p.kubernetes, "1.15");
  EXPECT_EQ(p.volume_options.at("name"), "{{unique}}");
  EXPECT_EQ(p.fs_types, (std::vector<std::string>{"ext4", "xfs"}));
  EXPECT_EQ(p.secrets.at("password"), "hunter2");
  EXPECT_EQ(p.nodes, 2);
  EXPECT_FALSE(p.needs_root);
  EXPECT_EQ(p.TimeoutFor("mount"), Millis(250));
  EXPECT_EQ(p.install, (std::vector<std::string>{"{{driver}}", "install", "{{plugin_dir}}"}));
  EXPECT_EQ(p.TimeoutFor("waitforattach"), Millis(120000));
  EXPECT_EQ(p.TimeoutFor("unmount"), Millis(5000));
  EXPECT_EQ(p.skip.at("robustness/concurrent-volumes"), "backend is single-threaded");
  EXPECT_EQ(p.fixture.kind, "command");
}

TEST(Profile, ParsesInvalidAndFreeTextOptions) {
  auto p = ParseProfile(
      "driver: d\ninvalidOptions: {size: \"-1\"}\nfreeTextOptions: [share, username]\n", "p.yaml",
      "");
  EXPECT_EQ(p.invalid_options.at("size"), "-1");
  EXPECT_EQ(p.free_text_options, (std::vector<std::string>{"share", "username"}));
  EXPECT_THROW(ParseProfile("driver: d\nfreeTextOptions: {share: x}\n", "p.yaml", ""),
               std::runtime_error);
}

TEST(Profile, UnknownTopLevelKeyIsRefusedWithItsLine) {
  try {
    ParseProfile("driver: d\n\nfsType: [ext4]\n", "p.yaml", "");
    FAIL() << "accepted an unknown key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:3: unknown key 'fsType'"), std::string::npos)
        << e.what();
  }
}

TEST(Profile, UnknownNestedKeyIsRefusedWithItsLine) {
  try {
    ParseProfile("driver: d\ncapabilities:\n  attach: true\n  atach: false\n", "p.yaml", "");
    FAIL() << "accepted an unknown capability";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:4: unknown key 'atach' in capabilities"),
              std::string::npos)
        << e.what();
  }
}

TEST(Profile, WrongTypeIsRefused) {
  EXPECT_THROW(ParseProfile("driver: d\ncapabilities: {attach: maybe}\n", "p.yaml", ""),
               std::runtime_error);
  EXPECT_THROW(ParseProfile("driver: d\nnodes: 0\n", "p.yaml", ""), std::runtime_error);
  EXPECT_THROW(ParseProfile("driver: d\nfixture: nfs\n", "p.yaml", ""), std::runtime_error);
  EXPECT_THROW(ParseProfile("driver: d\ntimeouts: {mount: 5h}\n", "p.yaml", ""),
               std::runtime_error);
}

TEST(Profile, EmptyInstallCommandIsRefused) {
  EXPECT_THROW(ParseProfile("driver: d\ninstall: []\n", "p.yaml", "/"), std::runtime_error);
}

TEST(Profile, DriverIsRequired) {
  EXPECT_THROW(ParseProfile("nodes: 1\n", "p.yaml", ""), std::runtime_error);
}

TEST(Profile, DurationsAcceptMillisecondsSecondsMinutes) {
  EXPECT_EQ(ParseDuration("200ms"), Millis(200));
  EXPECT_EQ(ParseDuration("1.5s"), Millis(1500));
  EXPECT_EQ(ParseDuration("30"), Millis(30000));
  EXPECT_EQ(ParseDuration("2m"), Millis(120000));
  EXPECT_THROW(ParseDuration("-1s"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("soon"), std::invalid_argument);
}

}  // namespace
}  // namespace flexkit::conform
