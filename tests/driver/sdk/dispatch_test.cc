#include "driver/sdk/dispatch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "driver/sdk/secrets.h"
#include "tests/driver/sdk/mock_driver.h"

namespace flexvolume {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::Return;
using ::testing::StrictMock;
using ::testing::Throw;

const std::string kJson =
    R"({"kubernetes.io/fsType":"ext4","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw"})";
const Options kOpts = {{"kubernetes.io/fsType", "ext4"},
                       {"kubernetes.io/pvOrVolumeName", "pv-1"},
                       {"kubernetes.io/readwrite", "rw"}};

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override { SecretRegistry::Global().ClearForTesting(); }
  StrictMock<MockDriver> driver;
};

// Each verb in the argv shape current kubelet uses (reference §5, the shapes
// the Kubernetes unit tests pin), reaching the right method with the right
// arguments.
TEST_F(DispatchTest, Init) {
  EXPECT_CALL(driver, Init()).WillOnce(Return(Succeed()));
  DriverStatus r = Dispatch(driver, {"init"});
  EXPECT_TRUE(r.IsSuccess());
  ASSERT_TRUE(r.capabilities) << "init replies carry capabilities even if the driver set none";
  EXPECT_TRUE(r.capabilities->attach);
}

TEST_F(DispatchTest, GetVolumeName) {
  EXPECT_CALL(driver, GetVolumeName(Eq(kOpts))).WillOnce(Return(NotSupported()));
  EXPECT_TRUE(Dispatch(driver, {"getvolumename", kJson}).IsNotSupported());
}

TEST_F(DispatchTest, Attach) {
  DriverStatus ok = Succeed();
  ok.device = "/dev/xvdf";
  EXPECT_CALL(driver, Attach(Eq(kOpts), "localhost")).WillOnce(Return(ok));
  EXPECT_EQ(Dispatch(driver, {"attach", kJson, "localhost"}).device, "/dev/xvdf");
}

TEST_F(DispatchTest, DetachGetsTheVolumeNameNotADevice) {
  EXPECT_CALL(driver, Detach("sdx", "localhost")).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"detach", "sdx", "localhost"}).IsSuccess());
}

TEST_F(DispatchTest, WaitForAttachAcceptsAnEmptyDevice) {
  EXPECT_CALL(driver, WaitForAttach("/dev/sdx", Eq(kOpts))).WillOnce(Return(Succeed()));
  EXPECT_CALL(driver, WaitForAttach("", Eq(kOpts))).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"waitforattach", "/dev/sdx", kJson}).IsSuccess());
  EXPECT_TRUE(Dispatch(driver, {"waitforattach", "", kJson}).IsSuccess());
}

TEST_F(DispatchTest, IsAttachedAlwaysAnswersABoolean) {
  EXPECT_CALL(driver, IsAttached(Eq(kOpts), "localhost")).WillOnce(Return(Succeed()));
  DriverStatus r = Dispatch(driver, {"isattached", kJson, "localhost"});
  ASSERT_TRUE(r.attached);
  EXPECT_FALSE(*r.attached);
}

TEST_F(DispatchTest, MountDevice) {
  EXPECT_CALL(driver, MountDevice("/var/lib/kubelet/mount-dir", "/dev/sdx", Eq(kOpts)))
      .WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"mountdevice", "/var/lib/kubelet/mount-dir", "/dev/sdx", kJson})
                  .IsSuccess());
}

TEST_F(DispatchTest, UnmountDeviceGetsThePath) {
  EXPECT_CALL(driver, UnmountDevice("/var/lib/kubelet/mount-dir")).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"unmountdevice", "/var/lib/kubelet/mount-dir"}).IsSuccess());
}

TEST_F(DispatchTest, MountGetsDecodedSecretsAndPodInfo) {
  const std::string json =
      R"({"kubernetes.io/fsType":"ext4","kubernetes.io/mounterArgs.FsGroup":"2000","kubernetes.io/pod.name":"p","kubernetes.io/pod.namespace":"ns","kubernetes.io/pod.uid":"uid-1","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw","kubernetes.io/secret/password":"c2VjcmV0","kubernetes.io/serviceAccount.name":"default","server":"x"})";
  Options seen;
  EXPECT_CALL(driver, Mount("/pods/uid-1/volumes/foo~cifs/pv-1", _))
      .WillOnce([&](const std::string&, const Options& o) {
        seen = o;
        return Succeed();
      });
  EXPECT_TRUE(Dispatch(driver, {"mount", "/pods/uid-1/volumes/foo~cifs/pv-1", json}).IsSuccess());
  EXPECT_EQ(seen.at("kubernetes.io/secret/password"), "secret");
  EXPECT_EQ(FsGroup(seen), "2000");
  EXPECT_EQ(seen.at("kubernetes.io/pod.uid"), "uid-1");
}

TEST_F(DispatchTest, Unmount) {
  EXPECT_CALL(driver, Unmount("/pods/x")).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"unmount", "/pods/x"}).IsSuccess());
}

TEST_F(DispatchTest, ExpandVolume) {
  EXPECT_CALL(driver, ExpandVolume(Eq(kOpts), "/global", 6442450944u, 2147483648u))
      .WillOnce(Return(Succeed()));
  EXPECT_TRUE(
      Dispatch(driver, {"expandvolume", kJson, "/global", "6442450944", "2147483648"}).IsSuccess());
}

TEST_F(DispatchTest, ExpandFs) {
  EXPECT_CALL(driver, ExpandFs(Eq(kOpts), "/dev/xvdf", "/pods/x", 6442450944u, 2147483648u))
      .WillOnce(Return(Succeed()));
  EXPECT_TRUE(
      Dispatch(driver, {"expandfs", kJson, "/dev/xvdf", "/pods/x", "6442450944", "2147483648"})
          .IsSuccess());
}

TEST_F(DispatchTest, BadSizesAreFailuresWithoutCallingTheDriver) {
  for (const char* size : {"", "-1", "1e9", "12abc", "18446744073709551616"}) {
    DriverStatus r = Dispatch(driver, {"expandfs", kJson, "/dev/x", "/p", size, "1"});
    EXPECT_TRUE(r.IsFailure()) << size;
    EXPECT_THAT(r.message, HasSubstr("<newSizeBytes> must be a decimal byte count"));
  }
}

TEST_F(DispatchTest, DefaultDriverMethodsAnswerNotSupported) {
  struct InitOnly : Driver {
    DriverStatus Init() override { return Succeed(); }
  } d;
  const std::vector<std::vector<std::string>> calls = {
      {"getvolumename", "{}"},
      {"attach", "{}", "n"},
      {"detach", "v", "n"},
      {"waitforattach", "", "{}"},
      {"isattached", "{}", "n"},
      {"mountdevice", "/d", "/dev/x", "{}"},
      {"unmountdevice", "/d"},
      {"mount", "/d", "{}"},
      {"unmount", "/d"},
      {"expandvolume", "{}", "/d", "2", "1"},
      {"expandfs", "{}", "/dev/x", "/d", "2", "1"}};
  for (const auto& call : calls) {
    DriverStatus r = Dispatch(d, call);
    EXPECT_TRUE(r.IsNotSupported()) << call[0];
    EXPECT_EQ(ExitCodeFor(r), 0) << call[0];
  }
}

TEST_F(DispatchTest, UnknownVerbsAreNotSupportedWithExitZero) {
  for (const char* verb : {"foo", "waitfordetach", "getdevicemountpath", "Init", "MOUNT", ""}) {
    DriverStatus r = Dispatch(driver, {verb, "x"});
    EXPECT_TRUE(r.IsNotSupported()) << verb;
    EXPECT_EQ(ExitCodeFor(r), 0);
  }
}

TEST_F(DispatchTest, MissingVerbIsAFailureListingTheVerbs) {
  DriverStatus r = Dispatch(driver, {});
  EXPECT_TRUE(r.IsFailure());
  EXPECT_THAT(r.message, HasSubstr("no verb given"));
  EXPECT_THAT(r.message, HasSubstr("mountdevice"));
}

struct ArityCase {
  std::vector<std::string> args;
  const char* expected_usage;
};

TEST_F(DispatchTest, WrongArityIsAFailureSayingWhatWasExpected) {
  const ArityCase cases[] = {
      {{"init", "x"}, "`init`"},
      {{"getvolumename"}, "`getvolumename <json>`"},
      {{"attach", kJson}, "`attach <json> <nodeName>`"},
      {{"attach", kJson, "n", "extra"}, "`attach <json> <nodeName>`"},
      {{"detach", "pv-1"}, "`detach <volumeName> <nodeName>`"},
      {{"waitforattach", kJson}, "`waitforattach <device> <json>`"},
      {{"isattached", kJson}, "`isattached <json> <nodeName>`"},
      {{"mountdevice", "/d", kJson}, "`mountdevice <deviceMountPath> <device> <json>`"},
      {{"unmountdevice"}, "`unmountdevice <deviceMountPath>`"},
      {{"mount", "/d", "/dev/x", kJson}, "`mount <podVolumeDir> <json>`"},
      {{"unmount"}, "`unmount <podVolumeDir>`"},
      {{"unmount", "/a", "/b"}, "`unmount <podVolumeDir>`"},
      {{"expandvolume", kJson, "/d", "1"},
       "`expandvolume <json> <deviceMountPath> <newSizeBytes> <oldSizeBytes>`"},
      {{"expandfs", kJson, "/dev/x", "/d", "2"},
       "`expandfs <json> <device> <podVolumeDir> <newSizeBytes> <oldSizeBytes>`"},
  };
  for (const auto& c : cases) {
    DriverStatus r = Dispatch(driver, c.args);
    EXPECT_TRUE(r.IsFailure()) << c.args[0];
    EXPECT_EQ(ExitCodeFor(r), 1);
    EXPECT_THAT(r.message, HasSubstr(c.expected_usage)) << r.message;
    EXPECT_THAT(r.message, HasSubstr("wrong number of arguments"));
  }
}

TEST_F(DispatchTest, ArityErrorsNeverEchoArguments) {
  const std::string json = R"({"kubernetes.io/secret/password":"aHVudGVyMg=="})";
  DriverStatus r = Dispatch(driver, {"mount", "/d", json, "extra"});
  EXPECT_TRUE(r.IsFailure());
  EXPECT_THAT(r.message, Not(HasSubstr("aHVudGVyMg")));
  EXPECT_THAT(r.message, Not(HasSubstr("/d")));
}

TEST_F(DispatchTest, MalformedOrNonStringJsonFailsBeforeTheDriverRuns) {
  for (const char* json : {"", "{", "not json", "[]", R"({"a":1})", R"({"a":"b"} trailing)"}) {
    DriverStatus r = Dispatch(driver, {"attach", json, "node"});
    EXPECT_TRUE(r.IsFailure()) << json;
    EXPECT_THAT(r.message, HasSubstr("attach: ")) << r.message;
  }
}

TEST_F(DispatchTest, InvalidSecretFailsNamingTheKeyOnly) {
  DriverStatus r = Dispatch(driver, {"mount", "/d", R"({"kubernetes.io/secret/token":"%%%%"})"});
  EXPECT_TRUE(r.IsFailure());
  EXPECT_THAT(r.message, HasSubstr("kubernetes.io/secret/token"));
  EXPECT_THAT(r.message, Not(HasSubstr("%%%%")));
}

TEST_F(DispatchTest, DriverExceptionsBecomeFailures) {
  EXPECT_CALL(driver, Attach(_, _)).WillOnce(Throw(std::runtime_error("convoy is down")));
  DriverStatus r = Dispatch(driver, {"attach", kJson, "n"});
  EXPECT_TRUE(r.IsFailure());
  EXPECT_EQ(r.message, "attach: convoy is down");

  EXPECT_CALL(driver, Unmount(_)).WillOnce(Throw(42));
  r = Dispatch(driver, {"unmount", "/d"});
  EXPECT_TRUE(r.IsFailure());
  EXPECT_THAT(r.message, HasSubstr("not a std::exception"));
}

TEST_F(DispatchTest, SecretsAreScrubbedFromDriverMessages) {
  EXPECT_CALL(driver, Mount(_, _)).WillOnce([](const std::string&, const Options& o) {
    return Fail("login failed for password " + o.at("kubernetes.io/secret/password"));
  });
  DriverStatus r =
      Dispatch(driver, {"mount", "/d", R"({"kubernetes.io/secret/password":"aHVudGVyMg=="})"});
  EXPECT_EQ(r.message, "login failed for password <redacted>");
}

TEST_F(DispatchTest, SecretsAreScrubbedFromExceptionMessages) {
  EXPECT_CALL(driver, Mount(_, _))
      .WillOnce([](const std::string&, const Options& o) -> DriverStatus {
        throw std::runtime_error("bad token " + o.at("kubernetes.io/secret/token"));
      });
  DriverStatus r =
      Dispatch(driver, {"mount", "/d", R"({"kubernetes.io/secret/token":"czNjcjN0"})"});
  EXPECT_EQ(r.message, "mount: bad token <redacted>");
}

TEST_F(DispatchTest, LegacyShapesAreRefusedUnlessTheDriverOptsIn) {
  EXPECT_TRUE(Dispatch(driver, {"attach", kJson}).IsFailure());
  EXPECT_TRUE(Dispatch(driver, {"detach", "/dev/sdx"}).IsFailure());
  EXPECT_TRUE(Dispatch(driver, {"mount", "/d", "/dev/sdx", kJson}).IsFailure());
}

TEST_F(DispatchTest, LegacyShapesOfKubelet15) {
  const DispatchConfig legacy{.accept_legacy_argv = true};
  EXPECT_CALL(driver, Attach(Eq(kOpts), "")).WillOnce(Return(Succeed()));
  EXPECT_CALL(driver, Detach("/dev/sdx", "")).WillOnce(Return(Succeed()));
  EXPECT_CALL(driver, MountDevice("/pods/x", "/dev/sdx", Eq(kOpts))).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"attach", kJson}, legacy).IsSuccess());
  EXPECT_TRUE(Dispatch(driver, {"detach", "/dev/sdx"}, legacy).IsSuccess());
  EXPECT_TRUE(Dispatch(driver, {"mount", "/pods/x", "/dev/sdx", kJson}, legacy).IsSuccess());
}

TEST_F(DispatchTest, LegacyStillDispatchesCurrentShapes) {
  const DispatchConfig legacy{.accept_legacy_argv = true};
  EXPECT_CALL(driver, Attach(Eq(kOpts), "node-1")).WillOnce(Return(Succeed()));
  EXPECT_CALL(driver, Mount("/pods/x", Eq(kOpts))).WillOnce(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"attach", kJson, "node-1"}, legacy).IsSuccess());
  EXPECT_TRUE(Dispatch(driver, {"mount", "/pods/x", kJson}, legacy).IsSuccess());
}

TEST_F(DispatchTest, IsAttachedInEitherOrderWhenLegacy) {
  const DispatchConfig legacy{.accept_legacy_argv = true};
  EXPECT_CALL(driver, IsAttached(Eq(kOpts), "node-1")).Times(2).WillRepeatedly(Return(Succeed()));
  EXPECT_TRUE(Dispatch(driver, {"isattached", kJson, "node-1"}, legacy).IsSuccess());
  EXPECT_TRUE(Dispatch(driver, {"isattached", "node-1", kJson}, legacy).IsSuccess());
}

TEST_F(DispatchTest, IsAttachedWithTwoMalformedArgumentsReportsTheJsonError) {
  const DispatchConfig legacy{.accept_legacy_argv = true};
  DriverStatus r = Dispatch(driver, {"isattached", "{bad", "node-1"}, legacy);
  EXPECT_TRUE(r.IsFailure());
  EXPECT_THAT(r.message, HasSubstr("not valid JSON"));
}

TEST(DescribeCall, RedactsSecretsAndMalformedJson) {
  SecretRegistry::Global().ClearForTesting();
  const std::string text = DescribeCall(
      {"mount", "/pods/x", R"({"kubernetes.io/secret/password":"aHVudGVyMg==","server":"s"})"});
  EXPECT_THAT(text, Not(HasSubstr("aHVudGVyMg")));
  EXPECT_THAT(text, HasSubstr("\"server\":\"s\""));
  EXPECT_THAT(text, HasSubstr("\"/pods/x\""));
  const std::string bad = DescribeCall({"mount", "/pods/x", R"({"kubernetes.io/secret/p":"abc)"});
  EXPECT_THAT(bad, Not(HasSubstr("abc")));
  EXPECT_THAT(bad, HasSubstr("malformed JSON"));
}

}  // namespace
}  // namespace flexvolume
