#include "driver/convoy/convoy_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/sdk/dispatch.h"
#include "tests/driver/convoy/mock_convoy_client.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using flexvolume::DriverStatus;
using flexvolume::FakeMounter;
using flexvolume::Options;
using ::testing::_;
using ::testing::AllOf;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::Throw;

constexpr const char* kLocal = "/run/convoy/local.sock";
constexpr const char* kNodeA = "/run/convoy/node-a.sock";
constexpr const char* kNodeB = "/run/convoy/node-b.sock";

VolumeInfo Ebs(const std::string& name, const std::string& device,
               const std::string& mount_point = "") {
  VolumeInfo v;
  v.name = name;
  v.driver = "ebs";
  v.mount_point = mount_point;
  v.driver_info = {
      {"Device", device}, {"EBSVolumeID", "vol-0123456789abcdef0"}, {"MountPoint", mount_point}};
  return v;
}

VolumeInfo Vfs(const std::string& name, const std::string& path,
               const std::string& mount_point = "") {
  VolumeInfo v;
  v.name = name;
  v.driver = "vfs";
  v.mount_point = mount_point;
  v.driver_info = {{"Path", path}, {"MountPoint", mount_point}};
  return v;
}

Options Opts(std::map<std::string, std::string> extra = {}) {
  Options o = {{"kubernetes.io/fsType", "ext4"},
               {"kubernetes.io/pvOrVolumeName", "pv-1"},
               {"kubernetes.io/readwrite", "rw"}};
  for (auto& [k, v] : extra) o[k] = v;
  return o;
}

class ConvoyDriverTest : public ::testing::Test {
 protected:
  ConvoyDriverTest() {
    config.socket = kLocal;
    config.node_sockets = {{"node-a", kNodeA}};
    config.socket_template = "/run/convoy/{node}.sock";
    config.state_dir = state.path();
    config.timeouts.wait_for_attach = std::chrono::seconds(5);
    config.api = Api::kExtended;  // the API-mode tests set their own
  }
  ConvoyDriver Driver(std::string config_error = "") {
    return ConvoyDriver(config, config_error, DriverDeps{&clients, &mounter, &clock, &devices});
  }
  // `daemon` has no volume `name` until the driver creates it there; then
  // it reports it attached at /dev/xvdf.
  static void ExpectCreatedOnFirstUse(MockConvoyClient& daemon, const std::string& name) {
    EXPECT_CALL(daemon, Inspect(name))
        .WillOnce(Return(std::nullopt))
        .WillOnce(Return(Ebs(name, "/dev/xvdf")));
    EXPECT_CALL(daemon, Create(Field(&CreateRequest::name, name)))
        .WillOnce(Return(Ebs(name, "/dev/xvdf")));
  }
  // Makes `dir` a mount point in the fake mount table.
  void Mounted(const std::string& dir, const std::string& fstype = "ext4", bool ro = false) {
    mounter.mounts.push_back({"/dev/xvdf", dir, fstype, ro ? "ro" : "rw", ro});
  }

  flexkit::testing::TempDir state;
  Config config;
  MockClientFactory clients;
  FakeMounter mounter;
  FakeClock clock;
  FakeDevices devices;  // the devices the tests pretend exist
};

TEST_F(ConvoyDriverTest, InitReportsAttachModeCapabilities) {
  DriverStatus s = Driver().Init();
  ASSERT_TRUE(s.IsSuccess());
  EXPECT_TRUE(s.capabilities->attach);
  EXPECT_FALSE(s.capabilities->requires_fs_resize);
}

TEST_F(ConvoyDriverTest, InitInMountOnlyModeIsNotAttachable) {
  config.mode = Mode::kMountOnly;
  EXPECT_FALSE(Driver().Init().capabilities->attach);
}

TEST_F(ConvoyDriverTest, ABrokenConfigFailsEveryVerb) {
  auto d = Driver("invalid config /etc/x.json: bad");
  EXPECT_EQ(d.Init().message, "invalid config /etc/x.json: bad");
  EXPECT_TRUE(d.Attach(Opts(), "node-a").IsFailure());
  EXPECT_TRUE(d.Detach("pv-1", "node-a").IsFailure());
  EXPECT_TRUE(d.UnmountDevice("/x").IsFailure());
}

TEST_F(ConvoyDriverTest, GetVolumeNameIsNotSupported) {
  EXPECT_TRUE(Driver().GetVolumeName(Opts()).IsNotSupported());
}

TEST_F(ConvoyDriverTest, MountAndUnmountAreNotSupportedInAttachMode) {
  EXPECT_TRUE(Driver().Mount("/pods/x", Opts()).IsNotSupported());
  EXPECT_TRUE(Driver().Unmount("/pods/x").IsNotSupported());
}

TEST_F(ConvoyDriverTest, AttachCreatesOnTheNodesDaemonWithTheRequestedVolume) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_CALL(a, Create(AllOf(
                     Field(&CreateRequest::name, "pv-1"), Field(&CreateRequest::driver_name, "ebs"),
                     Field(&CreateRequest::driver_volume_id, "vol-0123456789abcdef0"),
                     Field(&CreateRequest::size, 1073741824), Field(&CreateRequest::type, "io1"),
                     Field(&CreateRequest::iops, 100), Field(&CreateRequest::fs_type, "xfs"))))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  DriverStatus s = Driver().Attach(Opts({{"volumeID", "vol-0123456789abcdef0"},
                                         {"size", "1Gi"},
                                         {"volumeType", "io1"},
                                         {"iops", "100"},
                                         {"kubernetes.io/fsType", "xfs"}}),
                                   "node-a");
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(s.device, "/dev/xvdf");
  EXPECT_EQ(clients.requested, std::vector<std::string>{kNodeA});
}

TEST_F(ConvoyDriverTest, AttachUsesTheSocketTemplateForOtherNodes) {
  auto& b = clients.At(kNodeB);
  EXPECT_CALL(b, Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "/dev/xvdg")));
  EXPECT_EQ(Driver().Attach(Opts(), "node-b").device, "/dev/xvdg");
}

TEST_F(ConvoyDriverTest, AttachRefusesNodeNamesThatWouldEscapeTheTemplate) {
  for (const char* node : {"../etc", "a/b", "", "Node"}) {
    DriverStatus s = Driver().Attach(Opts(), node);
    EXPECT_TRUE(s.IsFailure()) << node;
    EXPECT_THAT(s.message, HasSubstr("cannot be used in socketTemplate"));
  }
  EXPECT_TRUE(clients.requested.empty());
}

TEST_F(ConvoyDriverTest, AttachOfAnAttachedVolumeReturnsTheSameDevice) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  auto d = Driver();
  EXPECT_EQ(d.Attach(Opts(), "node-a").device, "/dev/xvdf");
  EXPECT_EQ(d.Attach(Opts(), "node-a").device, "/dev/xvdf");
}

TEST_F(ConvoyDriverTest, AttachReadoptsAStaleReference) {
  auto& a = clients.At(kNodeA);
  InSequence seq;
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "")));
  EXPECT_CALL(a, Delete("pv-1", true)).WillOnce(Return(true));
  EXPECT_CALL(a, Create(Field(&CreateRequest::driver_volume_id, "vol-0123456789abcdef0")))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdh")));
  EXPECT_EQ(Driver().Attach(Opts(), "node-a").device, "/dev/xvdh");
}

TEST_F(ConvoyDriverTest, AReferenceTheDaemonMarksDetachedIsNotAttached) {
  auto& a = clients.At(kNodeA);
  VolumeInfo stale = Ebs("pv-1", "/dev/xvdf");
  stale.driver_info["Attached"] = "false";
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(stale));
  EXPECT_EQ(Driver().IsAttached(Opts(), "node-a").attached, false);
}

TEST_F(ConvoyDriverTest, MountDeviceRefusesAnotherFilesystemThanRequested) {
  auto& local = clients.At(kLocal);
  VolumeInfo ext4 = Ebs("pv-1", "/dev/xvdf");
  ext4.driver_info["FSType"] = "ext4";
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(ext4));
  DriverStatus s =
      Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts({{"kubernetes.io/fsType", "xfs"}}));
  EXPECT_THAT(s.message, HasSubstr("the volume holds ext4, but kubernetes.io/fsType asks for xfs"));
}

TEST_F(ConvoyDriverTest, AnUnsetFsTypeTakesWhateverTheVolumeHolds) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_CALL(a, Create(Field(&CreateRequest::fs_type, "")))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_TRUE(Driver().Attach(Opts({{"kubernetes.io/fsType", ""}}), "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, ReattachAfterDetachAdoptsTheSameEbsVolume) {
  auto& a = clients.At(kNodeA);
  auto d = Driver();
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Return(std::nullopt))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")))
      .WillOnce(Return(std::nullopt));
  EXPECT_CALL(a, Create(Field(&CreateRequest::driver_volume_id, "")))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(a, Delete("pv-1", true)).WillOnce(Return(true));
  EXPECT_CALL(a, Create(Field(&CreateRequest::driver_volume_id, "vol-0123456789abcdef0")))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdg")));
  EXPECT_TRUE(d.Attach(Opts(), "node-a").IsSuccess());
  EXPECT_TRUE(d.Detach("pv-1", "node-a").IsSuccess());
  EXPECT_EQ(d.Attach(Opts(), "node-a").device, "/dev/xvdg");
}

TEST_F(ConvoyDriverTest, AttachRefusedByTheDaemonSaysWhichDaemonAndWhat) {
  auto& b = clients.At(kNodeB);
  EXPECT_CALL(b, Inspect("pv-1")).WillOnce(Return(std::nullopt)).WillOnce(Return(std::nullopt));
  EXPECT_CALL(b, Create(_))
      .WillOnce(Throw(ConvoyError("convoy at /run/convoy/node-b.sock: POST /v1/volumes/create: 400 "
                                  "can't re-use ebs volume vol-1: instance i-1 is running",
                                  400)));
  DriverStatus s = Driver().Attach(Opts(), "node-b");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_EQ(s.message,
            "attach pv-1 on node-b: convoy at /run/convoy/node-b.sock: POST /v1/volumes/create: "
            "400 can't re-use ebs "
            "volume vol-1: instance i-1 is running");
}

TEST_F(ConvoyDriverTest, AttachRaceWithAnotherCallerTakesTheExistingAttachment) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Return(std::nullopt))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(a, Create(_)).WillOnce(Throw(ConvoyError("400 Volume pv-1 already exists ", 400)));
  EXPECT_EQ(Driver().Attach(Opts(), "node-a").device, "/dev/xvdf");
}

TEST_F(ConvoyDriverTest, AttachWithAnUnreachableDaemonFails) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Throw(
          ConvoyError("convoy at /run/convoy/node-a.sock: GET /v1/volumes/: cannot connect", 0)));
  DriverStatus s = Driver().Attach(Opts(), "node-a");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("cannot connect"));
}

TEST_F(ConvoyDriverTest, AttachWithoutADeviceIsAFailureNotASuccess) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_CALL(a, Create(_)).WillOnce(Return(Ebs("pv-1", "")));
  EXPECT_THAT(Driver().Attach(Opts(), "node-a").message, HasSubstr("reported no device"));
}

TEST_F(ConvoyDriverTest, InvalidOptionsFailBeforeAnyRequest) {
  const std::vector<Options> bad = {Opts({{"kubernetes.io/pvOrVolumeName", "../x"}}),
                                    Opts({{"name", "a b"}}),
                                    Opts({{"name", "caf\xc3\xa9"}}),
                                    Opts({{"name", "/etc"}}),
                                    Opts({{"convoyDriver", "nfs"}}),
                                    Opts({{"size", "lots"}}),
                                    Opts({{"size", "-1Gi"}}),
                                    Opts({{"volumeType", "gp9"}}),
                                    Opts({{"iops", "1.5"}}),
                                    Opts({{"kubernetes.io/fsType", "ext3"}}),
                                    Opts({{"kubernetes.io/readwrite", "rwx"}}),
                                    Opts({{"volumeID", "vol-xyz"}}),
                                    Opts({{"name", std::string(1 << 20, 'a')}})};
  for (const Options& o : bad) {
    DriverStatus s = Driver().Attach(o, "node-a");
    EXPECT_TRUE(s.IsFailure());
    EXPECT_LT(s.message.size(), 400u) << "a hostile value must not be echoed whole";
  }
  EXPECT_TRUE(clients.requested.empty());
}

TEST_F(ConvoyDriverTest, IsAttachedAnswersBothWays) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")))
      .WillOnce(Return(std::nullopt));
  auto d = Driver();
  EXPECT_EQ(d.IsAttached(Opts(), "node-a").attached, true);
  EXPECT_EQ(d.IsAttached(Opts(), "node-a").attached, false);
}

TEST_F(ConvoyDriverTest, IsAttachedNeverSaysFalseWhenTheDaemonIsUnreachable) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Throw(ConvoyError("no complete reply within 100 ms", 0)));
  DriverStatus s = Driver().IsAttached(Opts(), "node-a");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_FALSE(s.attached.has_value());
}

TEST_F(ConvoyDriverTest, WaitForAttachReturnsTheDeviceOnceItExists) {
  auto d = Driver();
  EXPECT_TRUE(d.WaitForAttach("/dev/xvdf", Opts()).IsFailure()) << "never appears: times out";
  EXPECT_GE(clock.sleeps, 40) << "it polled until the deadline";
  devices.present.insert("/dev/xvdf");
  DriverStatus s = d.WaitForAttach("/dev/xvdf", Opts());
  EXPECT_TRUE(s.IsSuccess());
  EXPECT_EQ(s.device, "/dev/xvdf");
}

TEST_F(ConvoyDriverTest, WaitForAttachTimesOutWithinTheConfiguredBound) {
  auto d = Driver();
  DriverStatus s = d.WaitForAttach("/dev/xvdz", Opts());
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("device /dev/xvdz did not appear within 5000 ms"));
  EXPECT_LE(clock.now - std::chrono::steady_clock::time_point{}, std::chrono::milliseconds(5100));
}

TEST_F(ConvoyDriverTest, WaitForAttachWithAnEmptyDeviceLooksItUp) {
  auto& local = clients.At(kLocal);
  devices.present.insert("/dev/xvdf");
  EXPECT_CALL(local, Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  DriverStatus s = Driver().WaitForAttach("", Opts());
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(s.device, "/dev/xvdf");
}

TEST_F(ConvoyDriverTest, MountDeviceMountsWithReadOnlyAndFsType) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(local, Mount(AllOf(Field(&MountRequest::volume_name, "pv-1"),
                                 Field(&MountRequest::mount_point, "/g/pv-1"),
                                 Field(&MountRequest::read_write, "ro"),
                                 Field(&MountRequest::fs_type, "xfs"),
                                 Field(&MountRequest::bind_mount, ""))))
      .WillOnce([&](const MountRequest&) {
        Mounted("/g/pv-1", "xfs", /*ro=*/true);
        return std::string("/g/pv-1");
      });
  DriverStatus s = Driver().MountDevice(
      "/g/pv-1", "/dev/xvdf",
      Opts({{"kubernetes.io/readwrite", "ro"}, {"kubernetes.io/fsType", "xfs"}}));
  EXPECT_TRUE(s.IsSuccess()) << s.message;
}

TEST_F(ConvoyDriverTest, MountDeviceOnAMountedPathSucceedsWithoutRemounting) {
  auto& local = clients.At(kLocal);
  Mounted("/g/pv-1");
  EXPECT_CALL(local, Inspect("pv-1"))
      .Times(2)
      .WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf", "/g/pv-1")));
  EXPECT_TRUE(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).IsSuccess());
}

TEST_F(ConvoyDriverTest, MountDeviceOfAVfsVolumeBindMountsWithRemount) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1"))
      .Times(2)
      .WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1", "/other/node")));
  EXPECT_CALL(local, Mount(AllOf(Field(&MountRequest::bind_mount, "bind"),
                                 Field(&MountRequest::remount, true))))
      .WillOnce([&](const MountRequest&) {
        Mounted("/g/pv-1");
        return std::string("/g/pv-1");
      });
  EXPECT_TRUE(
      Driver().MountDevice("/g/pv-1", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}})).IsSuccess());
}

TEST_F(ConvoyDriverTest, MountDeviceFailsWhenTheDaemonClaimsAMountThatIsNotThere) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(local, Mount(_)).WillOnce(Return("/g/pv-1"));
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).message,
              HasSubstr("nothing is mounted there"));
}

TEST_F(ConvoyDriverTest, MountDeviceOfAnUnattachedVolumeFails) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).message,
              HasSubstr("not attached to this node"));
}

TEST_F(ConvoyDriverTest, MountDeviceRefusesADeviceMismatch) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "/dev/xvdg")));
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).message,
              HasSubstr("attached as /dev/xvdg"));
}

TEST_F(ConvoyDriverTest, UnmountDeviceUnmountsWhateverVolumeIsMountedThere) {
  auto& local = clients.At(kLocal);
  Mounted("/g/pv-1");
  EXPECT_CALL(local, List())
      .WillOnce(Return(
          std::map<std::string, VolumeInfo>{{"pv-1", Ebs("pv-1", "/dev/xvdf", "/g/pv-1")},
                                            {"pv-10", Ebs("pv-10", "/dev/xvdg", "/g/pv-10")}}));
  EXPECT_CALL(local, Umount("pv-1")).WillOnce([&](const std::string&) { mounter.mounts.clear(); });
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
}

TEST_F(ConvoyDriverTest, UnmountDeviceOfAnUnmountedPathSucceeds) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, List()).WillOnce(Return(std::map<std::string, VolumeInfo>{}));
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
}

TEST_F(ConvoyDriverTest, UnmountDeviceRefusesAForeignMount) {
  auto& local = clients.At(kLocal);
  Mounted("/g/pv-1");
  EXPECT_CALL(local, List()).WillOnce(Return(std::map<std::string, VolumeInfo>{}));
  EXPECT_THAT(Driver().UnmountDevice("/g/pv-1").message, HasSubstr("no volume of convoy at"));
}

TEST_F(ConvoyDriverTest, DetachDropsTheReferenceOnTheNodesDaemon) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(a, Delete("pv-1", true)).WillOnce(Return(true));
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, DetachOfAVfsVolumeMountedElsewhereKeepsTheReference) {
  // After a failover the shared vfs metadata names the new node's mount.
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(Vfs("pv-1", "/vfs/pv-1", "/b/global/pv-1")));
  EXPECT_CALL(a, Delete(_, _)).Times(0);
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, DetachOfANeverAttachedVolumeSucceeds) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  EXPECT_TRUE(Driver().Detach("not a convoy name", "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, DetachOnlyAsksThatNodesDaemon) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  EXPECT_EQ(clients.requested, std::vector<std::string>{kNodeA});
}

TEST_F(ConvoyDriverTest, DetachWithAnUnreachableDaemonFails) {
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Throw(ConvoyError("cannot connect", 0)));
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsFailure());
}

TEST_F(ConvoyDriverTest, DetachFindsAVolumeAttachedUnderACustomName) {
  auto& a = clients.At(kNodeA);
  auto d = Driver();
  ExpectCreatedOnFirstUse(a, "data-7");
  EXPECT_CALL(a, Delete("data-7", true)).WillOnce(Return(true));
  EXPECT_TRUE(
      d.Attach(Opts({{"name", "data-7"}, {"kubernetes.io/pvOrVolumeName", "data"}}), "node-a")
          .IsSuccess());
  EXPECT_TRUE(d.Detach("data", "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, MountOnlyModeAttachesAndMounts) {
  config.mode = Mode::kMountOnly;
  auto& local = clients.At(kLocal);
  ExpectCreatedOnFirstUse(local, "pv-1");
  EXPECT_CALL(local, Mount(Field(&MountRequest::mount_point, "/pods/u/vol")))
      .WillOnce([&](const MountRequest&) {
        Mounted("/pods/u/vol");
        return std::string("/pods/u/vol");
      });
  EXPECT_TRUE(Driver().Mount("/pods/u/vol", Opts()).IsSuccess());
}

TEST_F(ConvoyDriverTest, MountOnlyModeDetachesAfterAFailedMount) {
  config.mode = Mode::kMountOnly;
  auto& local = clients.At(kLocal);
  ExpectCreatedOnFirstUse(local, "pv-1");
  EXPECT_CALL(local, Mount(_))
      .WillOnce(Throw(ConvoyError("400 wrong fs type: the device holds ext4, not xfs", 400)));
  EXPECT_CALL(local, Delete("pv-1", true)).WillOnce(Return(true));
  DriverStatus s = Driver().Mount("/pods/u/vol", Opts());
  EXPECT_THAT(s.message, HasSubstr("wrong fs type"));
}

TEST_F(ConvoyDriverTest, MountOnlyModeUnmountDetaches) {
  config.mode = Mode::kMountOnly;
  flexkit::testing::TempDir pods;
  const std::string dir = pods.Join("vol");
  std::filesystem::create_directories(dir);
  auto& local = clients.At(kLocal);
  Mounted(dir);
  EXPECT_CALL(local, List())
      .WillOnce(Return(std::map<std::string, VolumeInfo>{{"pv-1", Ebs("pv-1", "/dev/xvdf", dir)}}));
  EXPECT_CALL(local, Umount("pv-1")).WillOnce([&](const std::string&) { mounter.mounts.clear(); });
  EXPECT_CALL(local, Delete("pv-1", true)).WillOnce(Return(true));
  EXPECT_TRUE(Driver().Unmount(dir).IsSuccess());
}

TEST_F(ConvoyDriverTest, MountOnlyModeUnmountOfMissingOrUnmountedDirSucceeds) {
  config.mode = Mode::kMountOnly;
  flexkit::testing::TempDir pods;
  EXPECT_TRUE(Driver().Unmount(pods.Join("missing")).IsSuccess());
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, List()).WillOnce(Return(std::map<std::string, VolumeInfo>{}));
  EXPECT_TRUE(Driver().Unmount(pods.path()).IsSuccess());
}

TEST_F(ConvoyDriverTest, AttachVerbsAreNotSupportedInMountOnlyMode) {
  config.mode = Mode::kMountOnly;
  auto d = Driver();
  EXPECT_TRUE(d.Attach(Opts(), "node-a").IsNotSupported());
  EXPECT_TRUE(d.Detach("pv-1", "node-a").IsNotSupported());
  EXPECT_TRUE(d.MountDevice("/g", "/dev/x", Opts()).IsNotSupported());
  EXPECT_TRUE(d.UnmountDevice("/g").IsNotSupported());
}

TEST_F(ConvoyDriverTest, ThroughDispatchSecretsNeverReachTheMessage) {
  config.mode = Mode::kMountOnly;
  auto d = Driver();
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("hunter2pw")).WillOnce(Throw(ConvoyError("cannot connect", 0)));
  // The volume name happens to equal the decoded secret: it is redacted
  // wherever it appears in the reply.
  DriverStatus s = flexvolume::Dispatch(
      d,
      {"mount", "/pods/x",
       R"({"kubernetes.io/pvOrVolumeName":"hunter2pw","kubernetes.io/secret/k":"aHVudGVyMnB3"})"});
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, ::testing::Not(HasSubstr("hunter2pw")));
  EXPECT_THAT(s.message, HasSubstr("<redacted>"));
}

// --- API modes: stock Convoy v0.5.2, the extensions, and auto ---
//
// The daemon answers below are the recorded ones (tests/data/fakes/
// convoy-v0.5.2): stock's vfs mount answers the volume's own directory and
// refuses a caller's mount point with a 400; stock ebs mounts where asked
// but ignores ReadWrite; the cloud's VolumeInUse comes back as Convoy's
// "AWS Error:" text.

constexpr const char* kStockVfsRefusal =
    "convoy at /run/convoy/local.sock: POST /v1/volumes/mount: 400 VFS doesn't support specified "
    "mount point";

ApiProbe Probed(ApiProbe::Kind kind) { return ApiProbe{kind, "probe answer"}; }

MATCHER(IsStockMount, "a v0.5.2 mount request (no mount point, no extensions)") {
  return arg.mount_point.empty() && !arg.extensions;
}

class ApiModeTest : public ConvoyDriverTest {
 protected:
  // A stock vfs daemon: mounting records and returns the volume's directory.
  void ExpectStockVfsMount(MockConvoyClient& daemon) {
    EXPECT_CALL(daemon, Mount(IsStockMount())).WillOnce(Return(std::string("/vfs/pv-1")));
  }
  const flexvolume::MountEntry* Top(const std::string& dir) const {
    for (auto it = mounter.mounts.rbegin(); it != mounter.mounts.rend(); ++it)
      if (it->target == dir) return &*it;
    return nullptr;
  }
};

TEST_F(ApiModeTest, AutoAsksEachDaemonOnceAndKeepsTheAnswerUntilItRestarts) {
  config.api = Api::kAuto;
  auto& local = clients.At(kLocal);
  std::string instance = "run-1";
  EXPECT_CALL(local, DaemonInstance()).WillRepeatedly([&] { return instance; });
  EXPECT_CALL(local, ProbeApi())
      .WillOnce(Return(Probed(ApiProbe::Kind::kStock)))
      .WillOnce(Return(Probed(ApiProbe::Kind::kExtended)));
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  ExpectStockVfsMount(local);
  const Options vfs = Opts({{"convoyDriver", "vfs"}});
  ASSERT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", vfs).IsSuccess());
  // A later call (a new process) takes the kept answer: no second probe.
  ASSERT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", vfs).IsSuccess());
  // The daemon restarted (maybe upgraded): asked again.
  instance = "run-2";
  EXPECT_CALL(local, Mount(Field(&MountRequest::bind_mount, "bind")))
      .WillOnce([&](const MountRequest&) {
        Mounted("/g/pv-2");
        return std::string("/g/pv-2");
      });
  EXPECT_TRUE(Driver().MountDevice("/g/pv-2", "/vfs/pv-1", vfs).IsSuccess());
}

TEST_F(ApiModeTest, AutoFallsBackToStockOnTheVfsMountPointRefusal) {
  config.api = Api::kAuto;
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, DaemonInstance()).WillRepeatedly(Return("run-1"));
  EXPECT_CALL(local, ProbeApi()).WillOnce(Return(Probed(ApiProbe::Kind::kUnknown)));
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  {
    InSequence order;
    EXPECT_CALL(local, Mount(AllOf(Field(&MountRequest::mount_point, "/g/pv-1"),
                                   Field(&MountRequest::bind_mount, "bind"))))
        .WillOnce(Throw(ConvoyError(kStockVfsRefusal, 400)));
    ExpectStockVfsMount(local);
  }
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}}));
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_NE(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(Top("/g/pv-1")->source, "/vfs/pv-1") << "the volume's directory, bound by the driver";
  // The fallback was kept: the next call knows the daemon is stock.
  ExpectStockVfsMount(local);
  EXPECT_TRUE(
      Driver().MountDevice("/g/pv-9", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}})).IsSuccess());
}

TEST_F(ApiModeTest, ExtendedModeNeverFallsBackOnTheRefusal) {
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  EXPECT_CALL(local, Mount(_)).WillOnce(Throw(ConvoyError(kStockVfsRefusal, 400)));
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}}));
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("VFS doesn't support specified mount point"));
}

TEST_F(ApiModeTest, StockVfsBindsTheVolumeDirectoryReadOnlyAndUnmountsItItself) {
  config.api = Api::kStock;
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  ExpectStockVfsMount(local);
  const Options ro = Opts({{"convoyDriver", "vfs"}, {"kubernetes.io/readwrite", "ro"}});
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", ro);
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_NE(Top("/g/pv-1"), nullptr);
  EXPECT_TRUE(Top("/g/pv-1")->read_only);
  // Idempotent: already bound here, no second mount.
  EXPECT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", ro).IsSuccess());

  // Convoy's record says only "its own directory", and every node shares
  // it: the driver finds its mount from its own record and the mount table
  // and unmounts it, asking the daemon nothing (the strict mock would say).
  s = Driver().UnmountDevice("/g/pv-1");
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
}

TEST_F(ApiModeTest, StockVfsMountLostWithACrashIsForgottenWithoutTellingTheDaemon) {
  // The daemon's mark may be another node's by now (failover): only an
  // unmount the driver did itself clears it.
  config.api = Api::kStock;
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  ExpectStockVfsMount(local);
  ASSERT_TRUE(
      Driver().MountDevice("/g/pv-1", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}})).IsSuccess());
  mounter.mounts.clear();  // the node rebooted
  EXPECT_CALL(local, List())
      .WillRepeatedly(Return(
          std::map<std::string, VolumeInfo>{{"pv-1", Vfs("pv-1", "/vfs/pv-1", "/vfs/pv-1")}}));
  EXPECT_CALL(local, Umount(_)).Times(0);
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
  // The record is gone: a foreign mount there now is not taken for ours.
  Mounted("/g/pv-1");
  EXPECT_THAT(Driver().UnmountDevice("/g/pv-1").message, HasSubstr("no volume of convoy at"));
}

TEST_F(ApiModeTest, StockVfsRefusesToStackOnAForeignMount) {
  config.api = Api::kStock;
  auto& local = clients.At(kLocal);
  Mounted("/g/pv-1");
  EXPECT_CALL(local, Inspect("pv-1")).WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1")));
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", Opts({{"convoyDriver", "vfs"}}));
  EXPECT_THAT(s.message, HasSubstr("something else is mounted there"));
}

TEST_F(ApiModeTest, StockEbsReadOnlyIsEnforcedWhenTheDaemonIgnoresIt) {
  config.api = Api::kStock;
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(local, Mount(AllOf(Field(&MountRequest::mount_point, "/g/pv-1"),
                                 Field(&MountRequest::extensions, false))))
      .WillOnce([&](const MountRequest&) {
        Mounted("/g/pv-1");  // stock: read-write whatever ReadWrite said
        return std::string("/g/pv-1");
      });
  DriverStatus s =
      Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts({{"kubernetes.io/readwrite", "ro"}}));
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_TRUE(Top("/g/pv-1")->read_only);
}

TEST_F(ApiModeTest, ADaemonThatIgnoresReadOnlyIsAFailureAndLeavesNothingMounted) {
  // An "extended" daemon that is not: the check after the mount catches it.
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(local, Mount(Field(&MountRequest::read_write, "ro")))
      .WillOnce([&](const MountRequest&) {
        Mounted("/g/pv-1");
        return std::string("/g/pv-1");
      });
  EXPECT_CALL(local, List())
      .WillOnce(
          Return(std::map<std::string, VolumeInfo>{{"pv-1", Ebs("pv-1", "/dev/xvdf", "/g/pv-1")}}));
  EXPECT_CALL(local, Umount("pv-1")).WillOnce([&](const std::string&) { mounter.mounts.clear(); });
  DriverStatus s =
      Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts({{"kubernetes.io/readwrite", "ro"}}));
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("it is mounted read-write (rw), but kubernetes.io/readwrite "
                                   "asks for ro"));
  EXPECT_TRUE(mounter.mounts.empty());
}

TEST_F(ApiModeTest, AMountOfAnotherFilesystemThanAskedIsAFailure) {
  config.api = Api::kStock;
  auto& local = clients.At(kLocal);
  EXPECT_CALL(local, Inspect("pv-1")).Times(2).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(local, Mount(_)).WillOnce([&](const MountRequest&) {
    Mounted("/g/pv-1", "xfs");  // an adopted volume: stock mounts what is there
    return std::string("/g/pv-1");
  });
  EXPECT_CALL(local, List())
      .WillOnce(
          Return(std::map<std::string, VolumeInfo>{{"pv-1", Ebs("pv-1", "/dev/xvdf", "/g/pv-1")}}));
  EXPECT_CALL(local, Umount("pv-1")).WillOnce([&](const std::string&) { mounter.mounts.clear(); });
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts());
  EXPECT_THAT(s.message, HasSubstr("it is mounted as xfs, but kubernetes.io/fsType asks for ext4"));
}

TEST_F(ApiModeTest, StockRefusesAnXfsRequestBeforeAskingTheDaemon) {
  config.api = Api::kStock;
  clients.At(kNodeA);  // strict: no call at all
  DriverStatus s = Driver().Attach(Opts({{"kubernetes.io/fsType", "xfs"}}), "node-a");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("stock Convoy v0.5.2 formats EBS volumes as ext4 only"));
  EXPECT_CALL(clients.At(kLocal), Inspect("pv-1")).WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  s = Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts({{"kubernetes.io/fsType", "xfs"}}));
  EXPECT_THAT(s.message, HasSubstr("ext4 only"));
}

TEST_F(ApiModeTest, StockSendsNoExtensionFieldsOnCreate) {
  config.api = Api::kStock;
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillOnce(Return(std::nullopt));
  EXPECT_CALL(a, Create(Field(&CreateRequest::extensions, false)))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_TRUE(Driver().Attach(Opts(), "node-a").IsSuccess());
}

TEST_F(ApiModeTest, StockTakeOverIsAFailureThatSaysWhatToDo) {
  config.api = Api::kStock;
  auto& b = clients.At(kNodeB);
  EXPECT_CALL(b, Inspect("pv-1")).Times(2).WillRepeatedly(Return(std::nullopt));
  EXPECT_CALL(b, Create(_))
      .WillOnce(Throw(ConvoyError(
          "convoy at /run/convoy/node-b.sock: POST /v1/volumes/create: 400 AWS Error:  VolumeInUse "
          "vol-0123456789abcdef0 is already attached to an instance",
          400)));
  DriverStatus s = Driver().Attach(Opts({{"volumeID", "vol-0123456789abcdef0"}}), "node-b");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("VolumeInUse"));
  EXPECT_THAT(s.message, HasSubstr("stock Convoy v0.5.2 cannot take over an EBS volume"));
  EXPECT_THAT(s.message, HasSubstr("api: extended"));
}

TEST_F(ApiModeTest, DetachNeverDeletesTheSharedReferenceOfAVfsVolume) {
  // Unmarked or marked, the reference is every node's: deleting it would
  // take the volume from the nodes that still have it.
  auto& a = clients.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1"))
      .WillOnce(Return(Vfs("pv-1", "/vfs/pv-1")))
      .WillOnce(Return(Vfs("pv-1", "/vfs/pv-1", "/vfs/pv-1")));
  EXPECT_CALL(a, Delete(_, _)).Times(0);
  for (int i = 0; i < 2; ++i) {
    DriverStatus s = Driver().Detach("pv-1", "node-a");
    EXPECT_TRUE(s.IsSuccess()) << s.message;
    EXPECT_THAT(s.message, HasSubstr("its shared Convoy reference stays for the other nodes"));
  }
}

}  // namespace
}  // namespace convoy_flexvolume
