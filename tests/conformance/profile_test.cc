#include "conformance/profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

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
  EXPECT_EQ(p.node_env.at("SOCK"), "/run/{{node}}.sock") << "substituted per node, not here";
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

TEST(Profile, PodVolumeIsAMountUnlessTheProfileSaysDirectory) {
  EXPECT_FALSE(ParseProfile("driver: d\n", "p.yaml", "").pod_volume_is_directory);
  EXPECT_FALSE(ParseProfile("driver: d\npodVolume: mount\n", "p.yaml", "").pod_volume_is_directory);
  EXPECT_TRUE(
      ParseProfile("driver: d\npodVolume: directory\n", "p.yaml", "").pod_volume_is_directory);
  try {
    ParseProfile("driver: d\npodVolume: dir\n", "p.yaml", "");
    ADD_FAILURE() << "podVolume: dir was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:2: podVolume must be mount"), std::string::npos)
        << e.what();
  }
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

TEST(Profile, ConvoyFakeFixtureTakesTheApiItPlays) {
  EXPECT_EQ(ParseProfile("driver: d\nfixture: {kind: convoy-fake}\n", "p.yaml", "").fixture.api,
            "extended");
  EXPECT_EQ(ParseProfile("driver: d\nfixture: {kind: convoy-fake, api: stock}\n", "p.yaml", "")
                .fixture.api,
            "stock");
  EXPECT_EQ(ParseProfile("driver: d\nfixture: {kind: convoy-fake, api: extended}\n", "p.yaml", "")
                .fixture.api,
            "extended");
  const std::pair<const char*, const char*> refused[] = {
      {"fixture:\n  kind: convoy-fake\n  api: v0.5.2\n",
       "p.yaml:4: fixture.api must be stock (Convoy v0.5.2 as released) or extended"},
      {"fixture:\n  kind: command\n  setup: \"true\"\n  api: stock\n",
       "p.yaml:5: fixture.api says which Convoy convoy-fake plays"},
  };
  for (const auto& [yaml, why] : refused) {
    try {
      ParseProfile(std::string("driver: d\n") + yaml, "p.yaml", "");
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(Profile, AccessModeSaysWhetherSeveralNodesMayMountAVolume) {
  EXPECT_FALSE(ParseProfile("driver: d\n", "p.yaml", "").read_write_many);
  EXPECT_FALSE(
      ParseProfile("driver: d\naccessMode: ReadWriteOnce\n", "p.yaml", "").read_write_many);
  EXPECT_TRUE(ParseProfile("driver: d\naccessMode: ReadWriteMany\n", "p.yaml", "").read_write_many);
  try {
    ParseProfile("driver: d\naccessMode: RWX\n", "p.yaml", "");
    ADD_FAILURE() << "accessMode: RWX was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:2: accessMode must be ReadWriteOnce"),
              std::string::npos)
        << e.what();
  }
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

// The command line's choices, resolved as a run (and --list) resolves them.
class ResolveProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    driver_ = dir_.Join("vendor~drv/drv");
    std::filesystem::create_directories(dir_.Join("vendor~drv"));
    std::ofstream(driver_) << "#!/bin/sh\n";
    std::filesystem::permissions(driver_, std::filesystem::perms::owner_all);
  }
  flexkit::testing::TempDir dir_{"resolve-profile"};
  std::string driver_;
};

TEST_F(ResolveProfileTest, ADriverAloneGetsTwoNodesControllerAttachAndItsFoldersName) {
  ProfileChoice choice;
  choice.driver = driver_;
  choice.timeout = "2s";
  const DriverProfile p = ResolveProfile(choice);
  EXPECT_EQ(p.driver, driver_);
  EXPECT_EQ(p.driver_name, "vendor/drv");
  EXPECT_EQ(p.nodes, 2);
  EXPECT_FALSE(p.kubelet_managed_attach);
  EXPECT_FALSE(p.capabilities) << "init says, once the caller asks it";
  EXPECT_EQ(p.default_timeout, Millis(2000));
}

TEST_F(ResolveProfileTest, DriverReplacesTheProfilesAndIsMadeAbsolute) {
  const std::string file = dir_.Join("p.yaml");
  std::ofstream(file) << "driver: missing/d\ndriverName: acme/x\nnodes: 1\n";
  ProfileChoice choice;
  choice.profile_path = file;
  choice.driver = driver_;
  const DriverProfile p = ResolveProfile(choice);
  EXPECT_EQ(p.driver, driver_);
  EXPECT_EQ(p.driver_name, "acme/x") << "the profile's name stays";
  EXPECT_EQ(p.nodes, 1);
}

TEST_F(ResolveProfileTest, AnInvalidProfileANonExecutableDriverAndABadTimeoutAreRefused) {
  const std::string file = dir_.Join("bad.yaml");
  std::ofstream(file) << "driver: " << driver_ << "\nbogus: 1\n";
  ProfileChoice bad_file;
  bad_file.profile_path = file;
  EXPECT_THROW(
      {
        try {
          ResolveProfile(bad_file);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("bad.yaml:2"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);

  ProfileChoice not_executable;
  not_executable.driver = dir_.Join("vendor~drv");  // a directory
  try {
    ResolveProfile(not_executable);
    ADD_FAILURE() << "a directory is not a driver";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not an executable file"), std::string::npos);
  }

  ProfileChoice bad_timeout;
  bad_timeout.driver = driver_;
  bad_timeout.timeout = "5x";
  try {
    ResolveProfile(bad_timeout);
    ADD_FAILURE() << "5x is not a duration";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--timeout 5x"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flexkit::conform
