#include "driver/convoy/convoy_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "driver/sdk/dispatch.h"
#include "tests/driver/convoy/fake_convoy_daemon.h"
#include "tests/driver/convoy/mock_convoy_client.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using flexvolume::DriverStatus;
using flexvolume::FakeMounter;
using flexvolume::Options;
using ::testing::AllOf;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Return;
using Fault = FakeConvoyDaemon::Fault;

constexpr const char* kLocal = "/run/convoy/local.sock";
constexpr const char* kNodeA = "/run/convoy/node-a.sock";
constexpr const char* kNodeB = "/run/convoy/node-b.sock";
constexpr const char* kAdoptedVolumeId = "vol-0123456789abcdef0";

// Answers for the strict mocks.
VolumeInfo Ebs(const std::string& name, const std::string& device) {
  VolumeInfo v;
  v.name = name;
  v.driver = "ebs";
  v.driver_info = {{"Device", device}, {"EBSVolumeID", kAdoptedVolumeId}, {"MountPoint", ""}};
  return v;
}

VolumeInfo Vfs(const std::string& name, const std::string& path, const std::string& mount_point) {
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

Options VfsOpts(std::map<std::string, std::string> extra = {}) {
  extra["convoyDriver"] = "vfs";
  return Opts(std::move(extra));
}

// Requests someone else (kubelet, the controller, an operator) made of a
// daemon before the call under test.
CreateRequest EbsCreate(const std::string& name, const std::string& volume_id = "") {
  CreateRequest r;
  r.name = name;
  r.driver_name = "ebs";
  r.driver_volume_id = volume_id;
  return r;
}

CreateRequest VfsCreate(const std::string& name) {
  CreateRequest r;
  r.name = name;
  r.driver_name = "vfs";
  return r;
}

// A mount at `mount_point` (none: v0.5.2's vfs mount), bound for `bind`.
MountRequest MountOf(const std::string& name, const std::string& mount_point,
                     const std::string& bind = "") {
  MountRequest r;
  r.volume_name = name;
  r.mount_point = mount_point;
  r.read_write = "rw";
  r.bind_mount = bind;
  return r;
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
    return ConvoyDriver(config, config_error, DriverDeps{clients, &mounter, &clock, &devices});
  }
  // Mounts `source` at `dir` on this node, behind the driver's back.
  void MountOnThisNode(const std::string& source, const std::string& dir,
                       const std::string& fstype = "ext4", bool ro = false) {
    mounter.mounts.push_back({source, dir, fstype, ro ? "ro" : "rw", ro});
  }
  // The topmost mount at `dir` on this node, or null.
  const flexvolume::MountEntry* Top(const std::string& dir) const {
    for (auto it = mounter.mounts.rbegin(); it != mounter.mounts.rend(); ++it)
      if (it->target == dir) return &*it;
    return nullptr;
  }
  long MountsAt(const std::string& dir) const {
    return std::count_if(mounter.mounts.begin(), mounter.mounts.end(),
                         [&](const flexvolume::MountEntry& m) { return m.target == dir; });
  }
  // An EBS disk nobody has attached, holding `filesystem`.
  void AddAdoptableDisk(const std::string& filesystem) {
    EbsCloud::Volume disk;
    disk.size = int64_t{1} << 30;
    disk.filesystem = filesystem;
    daemons.cloud.volumes[kAdoptedVolumeId] = disk;
  }
  const EbsCloud::Volume& DiskOf(const FakeConvoyDaemon& daemon, const std::string& name) const {
    return daemons.cloud.volumes.at(daemon.ebs_records.at(name).volume_id);
  }

  flexkit::testing::TempDir state;
  Config config;
  FakeMounter mounter;  // this node's mount table
  FakeMounter node_a_mounts;
  FakeMounter node_b_mounts;
  FakeConvoyDaemons daemons;
  FakeConvoyDaemon& local = daemons.Start(kLocal, "i-local", &mounter);
  FakeConvoyDaemon& node_a = daemons.Start(kNodeA, "i-node-a", &node_a_mounts);
  FakeConvoyDaemon& node_b = daemons.Start(kNodeB, "i-node-b", &node_b_mounts);
  // For the few tests about the exact request the driver sends.
  MockClientFactory mocks;
  ConvoyClientFactory* clients = &daemons;
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
  EXPECT_TRUE(daemons.requested.empty());
}

TEST_F(ConvoyDriverTest, GetVolumeNameIsNotSupported) {
  EXPECT_TRUE(Driver().GetVolumeName(Opts()).IsNotSupported());
}

TEST_F(ConvoyDriverTest, MountAndUnmountAreNotSupportedInAttachMode) {
  EXPECT_TRUE(Driver().Mount("/pods/x", Opts()).IsNotSupported());
  EXPECT_TRUE(Driver().Unmount("/pods/x").IsNotSupported());
}

// What the create request carries is the point here (an adopted disk's
// size, type and iops are the cloud's, not the request's): a strict mock.
TEST_F(ConvoyDriverTest, AttachCreatesOnTheNodesDaemonWithTheRequestedVolume) {
  clients = &mocks;
  auto& a = mocks.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillRepeatedly(Return(std::nullopt));
  EXPECT_CALL(a, Create(AllOf(
                     Field(&CreateRequest::name, "pv-1"), Field(&CreateRequest::driver_name, "ebs"),
                     Field(&CreateRequest::driver_volume_id, kAdoptedVolumeId),
                     Field(&CreateRequest::size, 1073741824), Field(&CreateRequest::type, "io1"),
                     Field(&CreateRequest::iops, 100), Field(&CreateRequest::fs_type, "xfs"))))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  DriverStatus s = Driver().Attach(Opts({{"volumeID", kAdoptedVolumeId},
                                         {"size", "1Gi"},
                                         {"volumeType", "io1"},
                                         {"iops", "100"},
                                         {"kubernetes.io/fsType", "xfs"}}),
                                   "node-a");
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(s.device, "/dev/xvdf");
  EXPECT_EQ(mocks.requested, std::vector<std::string>{kNodeA});
}

TEST_F(ConvoyDriverTest, AttachUsesTheSocketTemplateForOtherNodes) {
  const std::string device = node_b.Create(EbsCreate("pv-1")).Device();
  EXPECT_EQ(Driver().Attach(Opts(), "node-b").device, device);
  EXPECT_EQ(daemons.requested, std::vector<std::string>{kNodeB});
}

TEST_F(ConvoyDriverTest, AttachRefusesNodeNamesThatWouldEscapeTheTemplate) {
  for (const char* node : {"../etc", "a/b", "", "Node"}) {
    DriverStatus s = Driver().Attach(Opts(), node);
    EXPECT_TRUE(s.IsFailure()) << node;
    EXPECT_THAT(s.message, HasSubstr("cannot be used in socketTemplate"));
  }
  EXPECT_TRUE(daemons.requested.empty());
}

TEST_F(ConvoyDriverTest, AttachOfAnAttachedVolumeReturnsTheSameDevice) {
  auto d = Driver();
  const std::string device = d.Attach(Opts(), "node-a").device.value_or("");
  EXPECT_FALSE(device.empty());
  EXPECT_EQ(d.Attach(Opts(), "node-a").device, device);
  EXPECT_EQ(daemons.cloud.volumes.size(), 1u) << "one disk, attached once";
}

TEST_F(ConvoyDriverTest, AttachReadoptsAStaleReference) {
  // node-a's daemon knows pv-1, but its disk was detached behind Convoy's
  // back (aws ec2 detach-volume): the same disk is attached again.
  const std::string id = node_a.Create(EbsCreate("pv-1")).driver_info.at("EBSVolumeID");
  daemons.cloud.volumes.at(id).instance.clear();
  daemons.cloud.volumes.at(id).device.clear();
  DriverStatus s = Driver().Attach(Opts(), "node-a");
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_FALSE(s.device.value_or("").empty());
  EXPECT_EQ(node_a.ebs_records.at("pv-1").volume_id, id) << "the same disk, not a new blank one";
  EXPECT_EQ(daemons.cloud.volumes.at(id).instance, "i-node-a");
  EXPECT_EQ(daemons.cloud.volumes.size(), 1u);
}

TEST_F(ConvoyDriverTest, AReferenceTheDaemonMarksDetachedIsNotAttached) {
  // pv-1 failed over: node-a's instance stopped and node-b took the disk
  // over; node-a's daemon keeps its reference, marked detached.
  ASSERT_TRUE(Driver().Attach(Opts(), "node-a").IsSuccess());
  daemons.cloud.stopped_instances.insert("i-node-a");
  ASSERT_TRUE(Driver().Attach(Opts(), "node-b").IsSuccess());
  ASSERT_EQ(node_a.ebs_records.count("pv-1"), 1u);
  EXPECT_EQ(Driver().IsAttached(Opts(), "node-a").attached, false);
  EXPECT_EQ(Driver().IsAttached(Opts(), "node-b").attached, true);
}

TEST_F(ConvoyDriverTest, MountDeviceRefusesAnotherFilesystemThanRequested) {
  const std::string device = local.Create(EbsCreate("pv-1")).Device();  // formatted ext4
  DriverStatus s = Driver().MountDevice("/g/pv-1", device, Opts({{"kubernetes.io/fsType", "xfs"}}));
  EXPECT_THAT(s.message, HasSubstr("the volume holds ext4, but kubernetes.io/fsType asks for xfs"));
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(DiskOf(local, "pv-1").filesystem, "ext4");
}

TEST_F(ConvoyDriverTest, AnUnsetFsTypeTakesWhateverTheVolumeHolds) {
  AddAdoptableDisk("xfs");
  // Asked for ext4 (the default), the daemon refuses rather than reformat.
  DriverStatus s = Driver().Attach(Opts({{"volumeID", kAdoptedVolumeId}}), "node-a");
  EXPECT_THAT(s.message, HasSubstr("already has a xfs filesystem, not ext4"));
  s = Driver().Attach(Opts({{"volumeID", kAdoptedVolumeId}, {"kubernetes.io/fsType", ""}}),
                      "node-a");
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(daemons.cloud.volumes.at(kAdoptedVolumeId).filesystem, "xfs");
  EXPECT_EQ(daemons.cloud.volumes.at(kAdoptedVolumeId).instance, "i-node-a");
}

TEST_F(ConvoyDriverTest, ReattachAfterDetachAdoptsTheSameEbsVolume) {
  auto d = Driver();
  ASSERT_TRUE(d.Attach(Opts(), "node-a").IsSuccess());
  const std::string id = node_a.ebs_records.at("pv-1").volume_id;
  ASSERT_TRUE(d.Detach("pv-1", "node-a").IsSuccess());
  ASSERT_EQ(node_a.ebs_records.count("pv-1"), 0u) << "the daemon forgets a detached volume";
  EXPECT_TRUE(d.Attach(Opts(), "node-a").IsSuccess());
  EXPECT_EQ(node_a.ebs_records.at("pv-1").volume_id, id) << "the same disk, with its data";
  EXPECT_EQ(daemons.cloud.volumes.size(), 1u);
  EXPECT_EQ(flexkit::testing::ReadFileText(state.Join("ebs-volume-ids/pv-1")), id);
}

TEST_F(ConvoyDriverTest, AttachRefusedByTheDaemonSaysWhichDaemonAndWhat) {
  AddAdoptableDisk("ext4");
  node_a.Create(EbsCreate("pv-1", kAdoptedVolumeId));  // node-a's instance runs
  DriverStatus s = Driver().Attach(Opts({{"volumeID", kAdoptedVolumeId}}), "node-b");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_EQ(s.message,
            "attach pv-1 on node-b: convoy at /run/convoy/node-b.sock: POST /v1/volumes/create: "
            "400 can't re-use ebs volumeID: vol-0123456789abcdef0 from instanceID: i-node-a, "
            "instance is running");
  EXPECT_EQ(daemons.cloud.volumes.at(kAdoptedVolumeId).instance, "i-node-a");
}

TEST_F(ConvoyDriverTest, AttachRaceWithAnotherCallerTakesTheExistingAttachment) {
  std::string theirs;
  node_a.before_next_create = [&] { theirs = node_a.Create(EbsCreate("pv-1")).Device(); };
  DriverStatus s = Driver().Attach(Opts(), "node-a");
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(s.device, theirs);
  EXPECT_EQ(daemons.cloud.volumes.size(), 1u) << "no second disk";
}

TEST_F(ConvoyDriverTest, AttachWithAnUnreachableDaemonFails) {
  node_a.fault = Fault::kDown;
  DriverStatus s = Driver().Attach(Opts(), "node-a");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("cannot connect"));
  EXPECT_TRUE(daemons.cloud.volumes.empty());
}

TEST_F(ConvoyDriverTest, AttachWithoutADeviceIsAFailureNotASuccess) {
  node_a.reports_no_device = true;
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
  EXPECT_TRUE(daemons.requested.empty());
}

TEST_F(ConvoyDriverTest, IsAttachedAnswersBothWays) {
  auto d = Driver();
  ASSERT_TRUE(d.Attach(Opts(), "node-a").IsSuccess());
  EXPECT_EQ(d.IsAttached(Opts(), "node-a").attached, true);
  ASSERT_TRUE(d.Detach("pv-1", "node-a").IsSuccess());
  EXPECT_EQ(d.IsAttached(Opts(), "node-a").attached, false);
}

TEST_F(ConvoyDriverTest, IsAttachedNeverSaysFalseWhenTheDaemonDoesNotAnswer) {
  node_a.Create(EbsCreate("pv-1"));
  const std::map<Fault, std::string> why = {{Fault::kDown, "cannot connect"},
                                            {Fault::kSlow, "no complete reply within"},
                                            {Fault::kGarbage, "no valid HTTP reply"}};
  for (const auto& [fault, text] : why) {
    node_a.fault = fault;
    DriverStatus s = Driver().IsAttached(Opts(), "node-a");
    EXPECT_TRUE(s.IsFailure());
    EXPECT_THAT(s.message, HasSubstr(text));
    EXPECT_FALSE(s.attached.has_value());
  }
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
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  devices.present.insert(device);
  DriverStatus s = Driver().WaitForAttach("", Opts());
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(s.device, device);
}

// That the mount request carries ReadWrite and FSType (and no BindMount for
// EBS) is the point here: a strict mock.
TEST_F(ConvoyDriverTest, MountDeviceMountsWithReadOnlyAndFsType) {
  clients = &mocks;
  auto& daemon = mocks.At(kLocal);
  EXPECT_CALL(daemon, Inspect("pv-1")).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(daemon, Mount(AllOf(Field(&MountRequest::volume_name, "pv-1"),
                                  Field(&MountRequest::mount_point, "/g/pv-1"),
                                  Field(&MountRequest::read_write, "ro"),
                                  Field(&MountRequest::fs_type, "xfs"),
                                  Field(&MountRequest::bind_mount, ""))))
      .WillOnce([&](const MountRequest&) {
        MountOnThisNode("/dev/xvdf", "/g/pv-1", "xfs", /*ro=*/true);
        return std::string("/g/pv-1");
      });
  DriverStatus s = Driver().MountDevice(
      "/g/pv-1", "/dev/xvdf",
      Opts({{"kubernetes.io/readwrite", "ro"}, {"kubernetes.io/fsType", "xfs"}}));
  EXPECT_TRUE(s.IsSuccess()) << s.message;
}

TEST_F(ConvoyDriverTest, MountDeviceOnAMountedPathSucceedsWithoutRemounting) {
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  local.Mount(MountOf("pv-1", "/g/pv-1"));
  DriverStatus s = Driver().MountDevice("/g/pv-1", device, Opts());
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(MountsAt("/g/pv-1"), 1) << "a second mount on top of the first";
}

// BindMount with ReMount in the request is the point here (with the shared
// record naming another node's mount the daemon must allow a new mount
// point): a strict mock.
TEST_F(ConvoyDriverTest, MountDeviceOfAVfsVolumeBindMountsWithRemount) {
  clients = &mocks;
  auto& daemon = mocks.At(kLocal);
  EXPECT_CALL(daemon, Inspect("pv-1"))
      .WillRepeatedly(Return(Vfs("pv-1", "/vfs/pv-1", "/other/node")));
  EXPECT_CALL(daemon, Mount(AllOf(Field(&MountRequest::bind_mount, "bind"),
                                  Field(&MountRequest::remount, true))))
      .WillOnce([&](const MountRequest&) {
        MountOnThisNode("/vfs/pv-1", "/g/pv-1", "");
        return std::string("/g/pv-1");
      });
  EXPECT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts()).IsSuccess());
}

TEST_F(ConvoyDriverTest, MountDeviceFailsWhenTheDaemonClaimsAMountThatIsNotThere) {
  // The daemon runs in a mount namespace of its own (a container without
  // mount propagation): its mounts never reach this node's table.
  FakeMounter daemons_own_namespace;
  local.mount_namespace = &daemons_own_namespace;
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", device, Opts()).message,
              HasSubstr("nothing is mounted there"));
}

TEST_F(ConvoyDriverTest, MountDeviceOfAnUnattachedVolumeFails) {
  node_a.Create(EbsCreate("pv-1"));  // attached to another node only
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).message,
              HasSubstr("not attached to this node"));
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
}

TEST_F(ConvoyDriverTest, MountDeviceRefusesADeviceMismatch) {
  local.Create(EbsCreate("pv-other"));
  ASSERT_EQ(local.Create(EbsCreate("pv-1")).Device(), "/dev/xvdg");
  EXPECT_THAT(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).message,
              HasSubstr("attached as /dev/xvdg"));
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
}

TEST_F(ConvoyDriverTest, UnmountDeviceUnmountsWhateverVolumeIsMountedThere) {
  for (const std::string name : {"pv-1", "pv-10"}) {
    local.Create(EbsCreate(name));
    local.Mount(MountOf(name, "/g/" + name));
  }
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(local.ebs_records.at("pv-1").mount_point, "");
  EXPECT_NE(Top("/g/pv-10"), nullptr) << "another volume's mount";
}

TEST_F(ConvoyDriverTest, UnmountDeviceOfAnUnmountedPathSucceeds) {
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
}

TEST_F(ConvoyDriverTest, UnmountDeviceRefusesAForeignMount) {
  MountOnThisNode("/dev/sda1", "/g/pv-1");
  EXPECT_THAT(Driver().UnmountDevice("/g/pv-1").message, HasSubstr("no volume of convoy at"));
  EXPECT_NE(Top("/g/pv-1"), nullptr);
}

TEST_F(ConvoyDriverTest, DetachDropsTheReferenceOnTheNodesDaemon) {
  ASSERT_TRUE(Driver().Attach(Opts(), "node-a").IsSuccess());
  const std::string id = node_a.ebs_records.at("pv-1").volume_id;
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  EXPECT_EQ(node_a.ebs_records.count("pv-1"), 0u);
  ASSERT_EQ(daemons.cloud.volumes.count(id), 1u) << "the reference only: the disk stays";
  EXPECT_EQ(daemons.cloud.volumes.at(id).instance, "");
}

TEST_F(ConvoyDriverTest, DetachOfAVfsVolumeMountedElsewhereKeepsTheReference) {
  // After a failover the shared vfs record names the new node's mount.
  node_b.Create(VfsCreate("pv-1"));
  node_b.Mount(MountOf("pv-1", "/b/global/pv-1", "bind"));
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  ASSERT_EQ(daemons.vfs_path.records.count("pv-1"), 1u);
  EXPECT_EQ(daemons.vfs_path.records.at("pv-1").mount_point, "/b/global/pv-1");
  EXPECT_EQ(node_b_mounts.mounts.size(), 1u);
}

TEST_F(ConvoyDriverTest, DetachOfANeverAttachedVolumeSucceeds) {
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  EXPECT_TRUE(Driver().Detach("not a convoy name", "node-a").IsSuccess());
}

TEST_F(ConvoyDriverTest, DetachOnlyAsksThatNodesDaemon) {
  node_b.Create(EbsCreate("pv-1"));  // it failed over to node-b
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsSuccess());
  EXPECT_EQ(daemons.requested, std::vector<std::string>{kNodeA});
  EXPECT_EQ(DiskOf(node_b, "pv-1").instance, "i-node-b");
}

TEST_F(ConvoyDriverTest, DetachWithAnUnreachableDaemonFails) {
  node_a.Create(EbsCreate("pv-1"));
  node_a.fault = Fault::kDown;
  EXPECT_TRUE(Driver().Detach("pv-1", "node-a").IsFailure());
  EXPECT_EQ(DiskOf(node_a, "pv-1").instance, "i-node-a");
}

TEST_F(ConvoyDriverTest, DetachFindsAVolumeAttachedUnderACustomName) {
  auto d = Driver();
  ASSERT_TRUE(
      d.Attach(Opts({{"name", "data-7"}, {"kubernetes.io/pvOrVolumeName", "data"}}), "node-a")
          .IsSuccess());
  ASSERT_EQ(node_a.ebs_records.count("data-7"), 1u);
  EXPECT_TRUE(d.Detach("data", "node-a").IsSuccess());
  EXPECT_EQ(node_a.ebs_records.count("data-7"), 0u);
}

TEST_F(ConvoyDriverTest, MountOnlyModeAttachesAndMounts) {
  config.mode = Mode::kMountOnly;
  DriverStatus s = Driver().Mount("/pods/u/vol", Opts());
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_EQ(local.ebs_records.count("pv-1"), 1u);
  ASSERT_NE(Top("/pods/u/vol"), nullptr);
  EXPECT_EQ(Top("/pods/u/vol")->source, local.ebs_records.at("pv-1").device);
  EXPECT_FALSE(Top("/pods/u/vol")->read_only);
}

TEST_F(ConvoyDriverTest, MountOnlyModeDetachesAfterAFailedMount) {
  config.mode = Mode::kMountOnly;
  mounter.fail_with = "mount /dev/xvdf on /pods/u/vol: wrong fs type, bad option, bad superblock";
  DriverStatus s = Driver().Mount("/pods/u/vol", Opts());
  EXPECT_THAT(s.message, HasSubstr("wrong fs type"));
  EXPECT_EQ(local.ebs_records.count("pv-1"), 0u) << "the attachment it made is undone";
  ASSERT_EQ(daemons.cloud.volumes.size(), 1u);
  EXPECT_EQ(daemons.cloud.volumes.begin()->second.instance, "");
}

TEST_F(ConvoyDriverTest, MountOnlyModeUnmountDetaches) {
  config.mode = Mode::kMountOnly;
  flexkit::testing::TempDir pods;
  const std::string dir = pods.Join("vol");
  std::filesystem::create_directories(dir);
  local.Create(EbsCreate("pv-1"));
  local.Mount(MountOf("pv-1", dir));
  const std::string id = local.ebs_records.at("pv-1").volume_id;
  EXPECT_TRUE(Driver().Unmount(dir).IsSuccess());
  EXPECT_EQ(Top(dir), nullptr);
  EXPECT_EQ(local.ebs_records.count("pv-1"), 0u);
  EXPECT_EQ(daemons.cloud.volumes.at(id).instance, "") << "detached, the disk kept";
}

TEST_F(ConvoyDriverTest, MountOnlyModeUnmountOfMissingOrUnmountedDirSucceeds) {
  config.mode = Mode::kMountOnly;
  flexkit::testing::TempDir pods;
  EXPECT_TRUE(Driver().Unmount(pods.Join("missing")).IsSuccess());
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
  local.fault = Fault::kDown;
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
// The fake daemons answer as recorded (tests/data/fakes/convoy-v0.5.2):
// stock's vfs mount records and answers the volume's own directory and
// refuses a caller's mount point with a 400; stock ebs mounts where asked
// but ignores ReadWrite; the cloud's VolumeInUse comes back as Convoy's
// "AWS Error:" text.
class ApiModeTest : public ConvoyDriverTest {};

TEST_F(ApiModeTest, AutoAsksEachDaemonOnceAndKeepsTheAnswerUntilItRestarts) {
  config.api = Api::kAuto;
  local.api = Api::kStock;
  local.Create(VfsCreate("pv-1"));
  ASSERT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts()).IsSuccess());
  EXPECT_EQ(local.probes_received, 1);
  // A later call (a new process) takes the kept answer: no second probe.
  ASSERT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts()).IsSuccess());
  EXPECT_EQ(local.probes_received, 1);
  // The daemon restarted, upgraded: asked again, and its BindMount used.
  local.api = Api::kExtended;
  local.Restart();
  EXPECT_TRUE(Driver().MountDevice("/g/pv-2", "/vfs/pv-1", VfsOpts()).IsSuccess());
  EXPECT_EQ(local.probes_received, 2);
  EXPECT_EQ(daemons.vfs_path.records.at("pv-1").mount_point, "/g/pv-2");
}

TEST_F(ApiModeTest, AutoFallsBackToStockOnTheVfsMountPointRefusal) {
  config.api = Api::kAuto;
  local.api = Api::kStock;
  local.unfamiliar_probe_answer = "volume name is required";  // a fork the driver does not know
  local.Create(VfsCreate("pv-1"));
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts());
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_NE(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(Top("/g/pv-1")->source, "/vfs/pv-1") << "the volume's directory, bound by the driver";
  // The fallback was kept: the next call knows the daemon is stock unasked.
  EXPECT_TRUE(Driver().MountDevice("/g/pv-9", "/vfs/pv-1", VfsOpts()).IsSuccess());
  EXPECT_EQ(local.probes_received, 1);
}

TEST_F(ApiModeTest, ExtendedModeNeverFallsBackOnTheRefusal) {
  local.api = Api::kStock;
  local.Create(VfsCreate("pv-1"));
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts());
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("VFS doesn't support specified mount point"));
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
}

TEST_F(ApiModeTest, StockVfsBindsTheVolumeDirectoryReadOnlyAndUnmountsItItself) {
  config.api = Api::kStock;
  local.api = Api::kStock;
  local.Create(VfsCreate("pv-1"));
  const Options ro = VfsOpts({{"kubernetes.io/readwrite", "ro"}});
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", ro);
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_NE(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(Top("/g/pv-1")->source, "/vfs/pv-1");
  EXPECT_TRUE(Top("/g/pv-1")->read_only);
  // Idempotent: already bound here, no second mount.
  EXPECT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", ro).IsSuccess());
  EXPECT_EQ(MountsAt("/g/pv-1"), 1);

  // Convoy's record says only "its own directory", and every node shares
  // it: the driver finds its mount from its own record and the mount table
  // and unmounts it without the daemon (down here), whose mark stays.
  local.fault = Fault::kDown;
  s = Driver().UnmountDevice("/g/pv-1");
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(daemons.vfs_path.records.at("pv-1").mount_point, "/vfs/pv-1");
}

TEST_F(ApiModeTest, StockVfsMountLostWithACrashIsForgottenWithoutTellingTheDaemon) {
  // The daemon's mark may be another node's by now (failover): only an
  // unmount the driver did itself clears it.
  config.api = Api::kStock;
  local.api = Api::kStock;
  local.Create(VfsCreate("pv-1"));
  ASSERT_TRUE(Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts()).IsSuccess());
  mounter.mounts.clear();  // the node rebooted
  EXPECT_TRUE(Driver().UnmountDevice("/g/pv-1").IsSuccess());
  EXPECT_EQ(daemons.vfs_path.records.at("pv-1").mount_point, "/vfs/pv-1");
  // The record is gone: a foreign mount there now is not taken for ours.
  MountOnThisNode("/dev/sda1", "/g/pv-1");
  EXPECT_THAT(Driver().UnmountDevice("/g/pv-1").message, HasSubstr("no volume of convoy at"));
}

TEST_F(ApiModeTest, StockVfsRefusesToStackOnAForeignMount) {
  config.api = Api::kStock;
  local.api = Api::kStock;
  local.Create(VfsCreate("pv-1"));
  MountOnThisNode("/dev/sda1", "/g/pv-1");
  DriverStatus s = Driver().MountDevice("/g/pv-1", "/vfs/pv-1", VfsOpts());
  EXPECT_THAT(s.message, HasSubstr("something else is mounted there"));
  EXPECT_EQ(MountsAt("/g/pv-1"), 1);
  EXPECT_EQ(daemons.vfs_path.records.at("pv-1").mount_point, "");
}

TEST_F(ApiModeTest, StockEbsReadOnlyIsEnforcedWhenTheDaemonIgnoresIt) {
  config.api = Api::kStock;
  local.api = Api::kStock;
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  DriverStatus s =
      Driver().MountDevice("/g/pv-1", device, Opts({{"kubernetes.io/readwrite", "ro"}}));
  ASSERT_TRUE(s.IsSuccess()) << s.message;
  ASSERT_NE(Top("/g/pv-1"), nullptr);
  EXPECT_EQ(Top("/g/pv-1")->source, device);
  EXPECT_TRUE(Top("/g/pv-1")->read_only);
}

TEST_F(ApiModeTest, ADaemonThatIgnoresReadOnlyIsAFailureAndLeavesNothingMounted) {
  // The config says extended but the daemon is stock: the check after the
  // mount catches it.
  local.api = Api::kStock;
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  DriverStatus s =
      Driver().MountDevice("/g/pv-1", device, Opts({{"kubernetes.io/readwrite", "ro"}}));
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("it is mounted read-write (rw), but kubernetes.io/readwrite "
                                   "asks for ro"));
  EXPECT_TRUE(mounter.mounts.empty());
  EXPECT_EQ(local.ebs_records.at("pv-1").mount_point, "");
}

TEST_F(ApiModeTest, AMountOfAnotherFilesystemThanAskedIsAFailure) {
  config.api = Api::kStock;
  local.api = Api::kStock;
  AddAdoptableDisk("xfs");  // stock neither reports nor checks it: it mounts what is there
  const std::string device = local.Create(EbsCreate("pv-1", kAdoptedVolumeId)).Device();
  DriverStatus s = Driver().MountDevice("/g/pv-1", device, Opts());
  EXPECT_THAT(s.message, HasSubstr("it is mounted as xfs, but kubernetes.io/fsType asks for ext4"));
  EXPECT_TRUE(mounter.mounts.empty());
}

TEST_F(ApiModeTest, StockRefusesAnXfsRequestBeforeAskingTheDaemon) {
  config.api = Api::kStock;
  DriverStatus s = Driver().Attach(Opts({{"kubernetes.io/fsType", "xfs"}}), "node-a");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("stock Convoy v0.5.2 formats EBS volumes as ext4 only"));
  EXPECT_EQ(node_a.requests_received, 0);
  const std::string device = local.Create(EbsCreate("pv-1")).Device();
  s = Driver().MountDevice("/g/pv-1", device, Opts({{"kubernetes.io/fsType", "xfs"}}));
  EXPECT_THAT(s.message, HasSubstr("ext4 only"));
  EXPECT_EQ(Top("/g/pv-1"), nullptr);
}

// Which keys the requests carry is the point here (stock ignores unknown
// keys, so no daemon could tell): strict mocks.
TEST_F(ApiModeTest, StockSendsNoExtensionFields) {
  config.api = Api::kStock;
  clients = &mocks;
  auto& a = mocks.At(kNodeA);
  EXPECT_CALL(a, Inspect("pv-1")).WillRepeatedly(Return(std::nullopt));
  EXPECT_CALL(a, Create(Field(&CreateRequest::extensions, false)))
      .WillOnce(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_TRUE(Driver().Attach(Opts(), "node-a").IsSuccess());
  auto& daemon = mocks.At(kLocal);
  EXPECT_CALL(daemon, Inspect("pv-1")).WillRepeatedly(Return(Ebs("pv-1", "/dev/xvdf")));
  EXPECT_CALL(daemon, Mount(Field(&MountRequest::extensions, false)))
      .WillOnce([&](const MountRequest&) {
        MountOnThisNode("/dev/xvdf", "/g/pv-1");
        return std::string("/g/pv-1");
      });
  EXPECT_TRUE(Driver().MountDevice("/g/pv-1", "/dev/xvdf", Opts()).IsSuccess());
}

TEST_F(ApiModeTest, StockTakeOverIsAFailureThatSaysWhatToDo) {
  config.api = Api::kStock;
  node_a.api = Api::kStock;
  node_b.api = Api::kStock;
  AddAdoptableDisk("ext4");
  node_a.Create(EbsCreate("pv-1", kAdoptedVolumeId));
  daemons.cloud.stopped_instances.insert("i-node-a");  // stock cannot detach it even so
  DriverStatus s = Driver().Attach(Opts({{"volumeID", kAdoptedVolumeId}}), "node-b");
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("400 AWS Error:  VolumeInUse"));
  EXPECT_THAT(s.message, HasSubstr("stock Convoy v0.5.2 cannot take over an EBS volume"));
  EXPECT_THAT(s.message, HasSubstr("api: extended"));
  EXPECT_EQ(daemons.cloud.volumes.at(kAdoptedVolumeId).instance, "i-node-a");
  EXPECT_EQ(node_b.ebs_records.count("pv-1"), 0u);
}

TEST_F(ApiModeTest, DetachNeverDeletesTheSharedReferenceOfAVfsVolume) {
  // Unmarked or marked, the reference is every node's: deleting it would
  // take the volume from the nodes that still have it.
  node_b.Create(VfsCreate("pv-1"));
  for (const bool marked : {false, true}) {
    if (marked) node_b.Mount(MountOf("pv-1", ""));  // v0.5.2's mark: its own directory
    DriverStatus s = Driver().Detach("pv-1", "node-a");
    EXPECT_TRUE(s.IsSuccess()) << s.message;
    EXPECT_THAT(s.message, HasSubstr("its shared Convoy reference stays for the other nodes"));
    EXPECT_EQ(daemons.vfs_path.records.count("pv-1"), 1u) << "marked: " << marked;
  }
}

}  // namespace
}  // namespace convoy_flexvolume
