// The EBS cloud model on a manual clock and fake loop devices: every state
// transition, EC2 error code, the device-name limit, the invariant,
// snapshots (states, data, restore, errors), and persistence across a restart.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>

#include "fakes/ebs/cloud.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::ebs {
namespace {

using nlohmann::json;

class FakesEbsCloud : public ::testing::Test {
 protected:
  std::unique_ptr<Cloud> MakeCloud(int64_t delay = 0, int64_t consistency = 0,
                                   int64_t snapshot_delay = 0) {
    CloudConfig config;
    config.state_dir = dir_.path();
    config.transition_delay_ms = delay;
    config.consistency_delay_ms = consistency;
    config.snapshot_delay_ms = snapshot_delay;
    return std::make_unique<Cloud>(config, clock_, loops_);
  }
  void TearDown() override {
    if (cloud_) {
      EXPECT_TRUE(cloud_->Violations().empty()) << json(cloud_->Violations()).dump();
    }
  }
  std::string Instance(const std::string& host) { return cloud_->RunInstance(host)["InstanceId"]; }
  std::string Volume(int64_t gib = 1) {
    return cloud_->CreateVolume(gib, "gp2", 0, "")["VolumeId"];
  }
  json Describe(const std::string& id) { return cloud_->DescribeVolumes({id}, "")[0]; }
  std::string Snapshot(const std::string& volume) {
    return cloud_->CreateSnapshot(volume, "test", {{"ConvoySnapshotName", "s1"}})["SnapshotId"];
  }
  json DescribeSnapshot(const std::string& id) { return cloud_->DescribeSnapshots({id}, "")[0]; }
  std::string VolumeFile(const std::string& id) { return dir_.path() + "/volumes/" + id + ".img"; }
  // Writes `text` at byte `offset` of a volume's file, as a host would through its device.
  void WriteAt(const std::string& volume, int64_t offset, const std::string& text) {
    std::fstream f(VolumeFile(volume), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f << text;
  }
  std::string ReadAt(const std::string& volume, int64_t offset, size_t size) {
    std::ifstream f(VolumeFile(volume), std::ios::binary);
    f.seekg(offset);
    std::string out(size, '\0');
    f.read(out.data(), static_cast<std::streamsize>(size));
    return out;
  }
  std::string ErrorCode(const std::function<void()>& f) {
    try {
      f();
    } catch (const Ec2Error& e) {
      return e.code;
    }
    return "no error";
  }

  flexkit::testing::TempDir dir_{"cf-cloud"};
  ManualClock clock_;
  FakeLoopDevices loops_;
  std::unique_ptr<Cloud> cloud_;
};

TEST_F(FakesEbsCloud, VolumeIdsAndInstanceIdsHaveEc2Shape) {
  cloud_ = MakeCloud();
  EXPECT_TRUE(std::regex_match(Volume(), std::regex("vol-[0-9a-f]{17}")));
  EXPECT_TRUE(std::regex_match(Instance("a"), std::regex("i-[0-9a-f]{17}")));
}

TEST_F(FakesEbsCloud, OneInstancePerHost) {
  cloud_ = MakeCloud();
  EXPECT_EQ(Instance("a"), Instance("a"));
  EXPECT_NE(Instance("a"), Instance("b"));
}

TEST_F(FakesEbsCloud, NewVolumeIsCreatingUntilTheDelayPasses) {
  cloud_ = MakeCloud(100);
  std::string v = Volume();
  EXPECT_EQ("creating", Describe(v)["State"]);
  clock_.Advance(100);
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, NewVolumeIsNotFoundDuringTheConsistencyWindow) {
  cloud_ = MakeCloud(0, 500);
  std::string v = Volume();
  EXPECT_EQ("InvalidVolume.NotFound", ErrorCode([&] { Describe(v); }));
  clock_.Advance(500);
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, VolumeFileIsSparseAndSized) {
  cloud_ = MakeCloud();
  std::string v = Volume(2);
  struct stat st {};
  ASSERT_EQ(0, ::stat((dir_.path() + "/volumes/" + v + ".img").c_str(), &st));
  EXPECT_EQ(2LL << 30, st.st_size);
  EXPECT_LT(st.st_blocks * 512, 1 << 20);
}

TEST_F(FakesEbsCloud, TypeAndIopsRulesGiveEc2Errors) {
  cloud_ = MakeCloud();
  EXPECT_EQ("InvalidParameterValue", ErrorCode([&] { cloud_->CreateVolume(1, "gp9", 0, ""); }));
  EXPECT_EQ("InvalidParameterValue", ErrorCode([&] { cloud_->CreateVolume(0, "gp2", 0, ""); }));
  EXPECT_EQ("InvalidParameterDependency",
            ErrorCode([&] { cloud_->CreateVolume(1, "io1", 0, ""); }));
  EXPECT_EQ("InvalidParameterDependency",
            ErrorCode([&] { cloud_->CreateVolume(1, "gp2", 100, ""); }));
  EXPECT_EQ("io1", cloud_->CreateVolume(4, "io1", 100, "")["VolumeType"]);
  for (const char* t : {"standard", "st1", "sc1"})
    EXPECT_EQ(t, cloud_->CreateVolume(1, t, 0, "")["VolumeType"]);
}

TEST_F(FakesEbsCloud, AttachGoesAttachingThenAttachedAndVolumeInUse) {
  cloud_ = MakeCloud(50);
  std::string i = Instance("a");
  std::string v = Volume();
  EXPECT_EQ("IncorrectState", ErrorCode([&] { cloud_->AttachVolume(v, i, ""); }));
  clock_.Advance(50);
  json a = cloud_->AttachVolume(v, i, "");
  EXPECT_EQ("attaching", a["State"]);
  EXPECT_EQ("/dev/sdf", a["Device"]);
  EXPECT_EQ("/dev/xvdf", a["HostDevice"]);
  EXPECT_EQ("in-use", Describe(v)["State"]);
  clock_.Advance(50);
  EXPECT_EQ("attached", Describe(v)["Attachments"][0]["State"]);
  EXPECT_EQ(dir_.path() + "/volumes/" + v + ".img", loops_.BackingFile(a["LoopDevice"]));
}

TEST_F(FakesEbsCloud, SecondAttachmentIsVolumeInUse) {
  cloud_ = MakeCloud();
  std::string a = Instance("a"), b = Instance("b"), v = Volume();
  cloud_->AttachVolume(v, a, "");
  EXPECT_EQ("VolumeInUse", ErrorCode([&] { cloud_->AttachVolume(v, b, ""); }));
  EXPECT_EQ("VolumeInUse", ErrorCode([&] { cloud_->AttachVolume(v, a, ""); }));
  EXPECT_EQ(1u, Describe(v)["Attachments"].size());
}

TEST_F(FakesEbsCloud, DeviceNamesRunFromSdfToSdpThenTheLimit) {
  cloud_ = MakeCloud();
  std::string i = Instance("a");
  std::vector<std::string> devices;
  for (int n = 0; n < 11; ++n) devices.push_back(cloud_->AttachVolume(Volume(), i, "")["Device"]);
  EXPECT_EQ("/dev/sdf", devices.front());
  EXPECT_EQ("/dev/sdp", devices.back());
  EXPECT_EQ(11u, std::set<std::string>(devices.begin(), devices.end()).size());
  EXPECT_EQ("AttachmentLimitExceeded", ErrorCode([&] { cloud_->AttachVolume(Volume(), i, ""); }));
}

TEST_F(FakesEbsCloud, AskedDeviceAlreadyUsedIsInvalidParameterValue) {
  cloud_ = MakeCloud();
  std::string i = Instance("a");
  cloud_->AttachVolume(Volume(), i, "/dev/sdh");
  EXPECT_EQ("InvalidParameterValue",
            ErrorCode([&] { cloud_->AttachVolume(Volume(), i, "/dev/sdh"); }));
  EXPECT_EQ("InvalidParameterValue",
            ErrorCode([&] { cloud_->AttachVolume(Volume(), i, "/dev/sda1"); }));
}

TEST_F(FakesEbsCloud, UnknownOrTerminatedInstanceIsInvalidInstanceIdNotFound) {
  cloud_ = MakeCloud();
  std::string v = Volume();
  EXPECT_EQ("InvalidInstanceID.NotFound",
            ErrorCode([&] { cloud_->AttachVolume(v, "i-00000000000000000", ""); }));
  std::string i = Instance("a");
  cloud_->SetInstanceState(i, "terminated");
  EXPECT_EQ("InvalidInstanceID.NotFound", ErrorCode([&] { cloud_->AttachVolume(v, i, ""); }));
  EXPECT_EQ("InvalidVolume.NotFound",
            ErrorCode([&] { cloud_->AttachVolume("vol-00000000000000000", i, ""); }));
}

TEST_F(FakesEbsCloud, DetachGoesDetachingThenAvailableAndReleasesTheLoopDevice) {
  cloud_ = MakeCloud(20);
  std::string i = Instance("a");
  std::string v = Volume();
  clock_.Advance(20);
  std::string loop = cloud_->AttachVolume(v, i, "")["LoopDevice"];
  clock_.Advance(20);
  EXPECT_EQ("detaching", cloud_->DetachVolume(v, i, false)["State"]);
  EXPECT_EQ("in-use", Describe(v)["State"]);
  clock_.Advance(20);
  cloud_->Tick();
  EXPECT_EQ("available", Describe(v)["State"]);
  EXPECT_TRUE(Describe(v)["Attachments"].empty());
  EXPECT_EQ("", loops_.BackingFile(loop));
}

TEST_F(FakesEbsCloud, DetachOfAvailableVolumeIsIncorrectState) {
  cloud_ = MakeCloud();
  std::string v = Volume();
  EXPECT_EQ("IncorrectState", ErrorCode([&] { cloud_->DetachVolume(v, "", false); }));
}

TEST_F(FakesEbsCloud, LateDetachFromTheOldInstanceLeavesTheNewAttachmentAlone) {
  cloud_ = MakeCloud();
  std::string a = Instance("a"), b = Instance("b"), v = Volume();
  cloud_->AttachVolume(v, a, "");
  cloud_->DetachVolume(v, a, true);
  cloud_->AttachVolume(v, b, "");
  EXPECT_EQ("InvalidAttachment.NotFound", ErrorCode([&] { cloud_->DetachVolume(v, a, false); }));
  EXPECT_EQ("InvalidAttachment.NotFound", ErrorCode([&] { cloud_->DetachVolume(v, a, true); }));
  json attachment = Describe(v)["Attachments"][0];
  EXPECT_EQ(b, attachment["InstanceId"]);
  EXPECT_EQ("attached", attachment["State"]);
}

TEST_F(FakesEbsCloud, DetachWhileMountedStaysBusyUntilUnmounted) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume();
  std::string loop = cloud_->AttachVolume(v, i, "")["LoopDevice"];
  loops_.SetInUse(loop, true);
  cloud_->DetachVolume(v, i, false);
  cloud_->Tick();
  EXPECT_EQ("busy", Describe(v)["Attachments"][0]["State"]);
  loops_.SetInUse(loop, false);
  cloud_->Tick();
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, ForcedDetachEndsABusyAttachment) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume();
  std::string loop = cloud_->AttachVolume(v, i, "")["LoopDevice"];
  loops_.SetInUse(loop, true);
  cloud_->DetachVolume(v, i, false);
  cloud_->Tick();
  ASSERT_EQ("busy", Describe(v)["Attachments"][0]["State"]);
  cloud_->DetachVolume(v, i, true);
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, StuckDetachNeverFinishesUntilForced) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume();
  cloud_->AttachVolume(v, i, "");
  cloud_->DetachVolume(v, i, false, /*stuck=*/true);
  clock_.Advance(60000);
  cloud_->Tick();
  EXPECT_EQ("detaching", Describe(v)["Attachments"][0]["State"]);
  cloud_->DetachVolume(v, i, true);
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, DeleteRefusesAttachedThenGoesDeletingThenGone) {
  cloud_ = MakeCloud(30);
  std::string i = Instance("a"), v = Volume();
  clock_.Advance(30);
  cloud_->AttachVolume(v, i, "");
  EXPECT_EQ("VolumeInUse", ErrorCode([&] { cloud_->DeleteVolume(v); }));
  clock_.Advance(30);
  cloud_->DetachVolume(v, i, false);
  clock_.Advance(30);
  cloud_->DeleteVolume(v);
  EXPECT_EQ("deleting", Describe(v)["State"]);
  EXPECT_EQ("IncorrectState", ErrorCode([&] { cloud_->DeleteVolume(v); }));
  clock_.Advance(30);
  EXPECT_EQ("InvalidVolume.NotFound", ErrorCode([&] { Describe(v); }));
  struct stat st {};
  EXPECT_NE(0, ::stat((dir_.path() + "/volumes/" + v + ".img").c_str(), &st));
}

TEST_F(FakesEbsCloud, StoppedInstanceKeepsItsAttachmentsTerminatedLosesThem) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume();
  cloud_->AttachVolume(v, i, "");
  cloud_->SetInstanceState(i, "stopped");
  EXPECT_EQ("in-use", Describe(v)["State"]);
  EXPECT_EQ("stopped", cloud_->DescribeInstances({i})[0]["State"]);
  cloud_->SetInstanceState(i, "running");
  cloud_->SetInstanceState(i, "terminated");
  EXPECT_EQ("available", Describe(v)["State"]);
  EXPECT_EQ("IncorrectInstanceState", ErrorCode([&] { cloud_->SetInstanceState(i, "running"); }));
}

TEST_F(FakesEbsCloud, StateSurvivesARestart) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume(), w = Volume();
  std::string loop = cloud_->AttachVolume(v, i, "/dev/sdg")["LoopDevice"];
  cloud_->SetInstanceState(i, "stopped");
  cloud_.reset();
  cloud_ = MakeCloud();
  json a = Describe(v)["Attachments"][0];
  EXPECT_EQ(i, a["InstanceId"]);
  EXPECT_EQ("/dev/sdg", a["Device"]);
  EXPECT_EQ(loop, a["LoopDevice"]);
  EXPECT_EQ("available", Describe(w)["State"]);
  EXPECT_EQ("stopped", cloud_->DescribeInstances({i})[0]["State"]);
  EXPECT_EQ(1u, loops_.DevicesUnder(dir_.path()).size());
}

TEST_F(FakesEbsCloud, RestartReleasesUnrecordedLoopDevicesAndFiles) {
  cloud_ = MakeCloud();
  std::string v = Volume();
  cloud_.reset();
  // What a kill -9 between the work and its record leaves behind.
  std::ofstream(dir_.path() + "/volumes/vol-0123456789abcdef0.img") << "x";
  loops_.Attach(dir_.path() + "/volumes/" + v + ".img");
  cloud_ = MakeCloud();
  EXPECT_TRUE(loops_.DevicesUnder(dir_.path()).empty());
  struct stat st {};
  EXPECT_NE(0, ::stat((dir_.path() + "/volumes/vol-0123456789abcdef0.img").c_str(), &st));
  EXPECT_EQ("available", Describe(v)["State"]);
}

TEST_F(FakesEbsCloud, RestartGivesAVanishedLoopDeviceBack) {
  cloud_ = MakeCloud();
  std::string i = Instance("a"), v = Volume();
  std::string loop = cloud_->AttachVolume(v, i, "")["LoopDevice"];
  cloud_.reset();
  loops_.Detach(loop);
  cloud_ = MakeCloud();
  std::string again = Describe(v)["Attachments"][0]["LoopDevice"];
  EXPECT_EQ(dir_.path() + "/volumes/" + v + ".img", loops_.BackingFile(again));
}

TEST_F(FakesEbsCloud, SnapshotIdsHaveEc2ShapeAndRecordTheirVolume) {
  cloud_ = MakeCloud();
  std::string v = Volume(2);
  json s = cloud_->CreateSnapshot(v, "Convoy snapshot", {{"ConvoyVolumeName", "data"}});
  EXPECT_TRUE(
      std::regex_match(s["SnapshotId"].get<std::string>(), std::regex("snap-[0-9a-f]{17}")));
  EXPECT_EQ(v, s["VolumeId"]);
  EXPECT_EQ(2, s["VolumeSize"]);
  EXPECT_EQ("Convoy snapshot", s["Description"]);
  EXPECT_EQ("data", s["Tags"]["ConvoyVolumeName"]);
  EXPECT_TRUE(std::regex_match(s["StartTime"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

TEST_F(FakesEbsCloud, SnapshotIsPendingUntilTheSnapshotDelayPassesThenCompleted) {
  cloud_ = MakeCloud(0, 0, 200);
  std::string s = Snapshot(Volume());
  EXPECT_EQ("pending", DescribeSnapshot(s)["State"]);
  EXPECT_EQ("0%", DescribeSnapshot(s)["Progress"]);
  clock_.Advance(199);
  EXPECT_EQ("pending", DescribeSnapshot(s)["State"]);
  clock_.Advance(1);
  EXPECT_EQ("completed", DescribeSnapshot(s)["State"]);
  EXPECT_EQ("100%", DescribeSnapshot(s)["Progress"]);
}

TEST_F(FakesEbsCloud, SnapshotWithZeroDelayIsCompletedAtOnce) {
  cloud_ = MakeCloud();
  EXPECT_EQ("completed", cloud_->CreateSnapshot(Volume(), "", {})["State"]);
}

TEST_F(FakesEbsCloud, StuckSnapshotStaysPending) {
  cloud_ = MakeCloud();
  std::string s = cloud_->CreateSnapshot(Volume(), "", {}, /*stuck=*/true)["SnapshotId"];
  clock_.Advance(3600000);
  cloud_->Tick();
  EXPECT_EQ("pending", DescribeSnapshot(s)["State"]);
}

TEST_F(FakesEbsCloud, SnapshotErrorsHaveEc2CodesAndTexts) {
  cloud_ = MakeCloud(100);
  auto message = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const Ec2Error& e) {
      return e.code + ": " + e.what();
    }
    return std::string("no error");
  };
  EXPECT_EQ("InvalidVolume.NotFound: The volume 'vol-00000000000000000' does not exist.",
            message([&] { cloud_->CreateSnapshot("vol-00000000000000000", "", {}); }));
  std::string creating = Volume();
  EXPECT_EQ("IncorrectState: The volume '" + creating + "' is in the 'creating' state.",
            message([&] { cloud_->CreateSnapshot(creating, "", {}); }));
  EXPECT_EQ("InvalidSnapshot.NotFound: The snapshot 'snap-00000000000000000' does not exist.",
            message([&] { cloud_->DescribeSnapshots({"snap-00000000000000000"}, ""); }));
  EXPECT_EQ("InvalidSnapshot.NotFound: The snapshot 'snap-00000000000000000' does not exist.",
            message([&] { cloud_->DeleteSnapshot("snap-00000000000000000"); }));
  EXPECT_EQ(
      "InvalidSnapshot.NotFound: The snapshot 'snap-00000000000000000' does not exist.",
      message([&] { cloud_->CreateVolume(1, "gp2", 0, "", false, "snap-00000000000000000"); }));
}

TEST_F(FakesEbsCloud, VolumeFromSnapshotHasTheDataOfTheMomentTheSnapshotStarted) {
  cloud_ = MakeCloud();
  std::string v = Volume(2);
  WriteAt(v, 0, "first block");
  WriteAt(v, (1LL << 30) + 4096, "far away");
  std::string s = Snapshot(v);
  WriteAt(v, 0, "LATER WRITE");
  json restored = cloud_->CreateVolume(0, "gp2", 0, "", false, s);
  std::string r = restored["VolumeId"];
  EXPECT_EQ(2, restored["Size"]) << "size 0 takes the snapshot's size";
  EXPECT_EQ(s, restored["SnapshotId"]);
  EXPECT_EQ("first block", ReadAt(r, 0, 11));
  EXPECT_EQ("far away", ReadAt(r, (1LL << 30) + 4096, 8));
  struct stat st {};
  ASSERT_EQ(0, ::stat(VolumeFile(r).c_str(), &st));
  EXPECT_EQ(2LL << 30, st.st_size);
  EXPECT_LT(st.st_blocks * 512, 1 << 20) << "the copy keeps the holes";
  std::string bigger = cloud_->CreateVolume(5, "gp2", 0, "", false, s)["VolumeId"];
  EXPECT_EQ(5, Describe(bigger)["Size"]);
  EXPECT_EQ("far away", ReadAt(bigger, (1LL << 30) + 4096, 8));
}

TEST_F(FakesEbsCloud, VolumeFromSnapshotRefusesPendingSnapshotsAndSmallerSizes) {
  cloud_ = MakeCloud(0, 0, 100);
  std::string s = Snapshot(Volume(3));
  try {
    cloud_->CreateVolume(0, "gp2", 0, "", false, s);
    ADD_FAILURE() << "a pending snapshot was used";
  } catch (const Ec2Error& e) {
    EXPECT_EQ("IncorrectState", e.code);
    EXPECT_EQ("The snapshot '" + s + "' is in the 'pending' state.", std::string(e.what()));
  }
  clock_.Advance(100);
  try {
    cloud_->CreateVolume(2, "gp2", 0, "", false, s);
    ADD_FAILURE() << "a volume smaller than its snapshot was made";
  } catch (const Ec2Error& e) {
    EXPECT_EQ("InvalidParameterValue", e.code);
    EXPECT_EQ("Volume of 2GiB is smaller than snapshot '" + s + "', expect size >= 3GiB",
              std::string(e.what()));
  }
}

TEST_F(FakesEbsCloud, SnapshotOutlivesItsVolumeAndDeleteRemovesItsFile) {
  cloud_ = MakeCloud();
  std::string v = Volume();
  std::string s = Snapshot(v);
  cloud_->DeleteVolume(v);
  cloud_->Tick();
  EXPECT_EQ(v, DescribeSnapshot(s)["VolumeId"]);
  EXPECT_EQ(1u, cloud_->DescribeSnapshots({}, v).size());
  EXPECT_EQ(0u, cloud_->DescribeSnapshots({}, "vol-00000000000000000").size());
  cloud_->DeleteSnapshot(s);
  EXPECT_TRUE(cloud_->DescribeSnapshots({}, "").empty());
  struct stat st {};
  EXPECT_NE(0, ::stat((dir_.path() + "/snapshots/" + s + ".img").c_str(), &st));
}

TEST_F(FakesEbsCloud, SnapshotsSurviveARestartAndAPendingOneCompletesAfterIt) {
  cloud_ = MakeCloud(0, 0, 60000);
  std::string v = Volume();
  WriteAt(v, 512, "kept");
  std::string done = cloud_->CreateSnapshot(v, "", {})["SnapshotId"];
  std::string stuck = cloud_->CreateSnapshot(v, "", {}, /*stuck=*/true)["SnapshotId"];
  clock_.Advance(60000);
  std::string pending = Snapshot(v);
  // Every change is on disk before it is acknowledged: dropping the model
  // without a shutdown is what a kill -9 leaves.
  cloud_.reset();
  cloud_ = MakeCloud(0, 0, 60000);
  EXPECT_EQ("completed", DescribeSnapshot(done)["State"]);
  EXPECT_EQ("pending", DescribeSnapshot(stuck)["State"]);
  EXPECT_EQ("s1", DescribeSnapshot(pending)["Tags"]["ConvoySnapshotName"]);
  cloud_->Tick();
  EXPECT_EQ("completed", DescribeSnapshot(pending)["State"]) << "timers restart with the process";
  EXPECT_EQ("kept", ReadAt(cloud_->CreateVolume(0, "gp2", 0, "", false, done)["VolumeId"], 512, 4));
}

TEST_F(FakesEbsCloud, RestartRemovesUnrecordedSnapshotFiles) {
  cloud_ = MakeCloud();
  std::string s = Snapshot(Volume());
  cloud_.reset();
  std::string leaked = dir_.path() + "/snapshots/snap-0123456789abcdef0.img";
  std::ofstream(leaked) << "x";
  cloud_ = MakeCloud();
  struct stat st {};
  EXPECT_NE(0, ::stat(leaked.c_str(), &st));
  EXPECT_EQ(0, ::stat((dir_.path() + "/snapshots/" + s + ".img").c_str(), &st));
}

TEST_F(FakesEbsCloud, FaultOnAnOperationThatIsNotEc2sIsRefusedAndSetsNothing) {
  cloud_ = MakeCloud();
  EXPECT_EQ("InvalidParameterValue", ErrorCode([&] { cloud_->SetFault("mount", Fault{}); }));
  EXPECT_EQ("InvalidParameterValue", ErrorCode([&] { cloud_->SetFault("attachvolume", Fault{}); }));
  EXPECT_EQ(0u, cloud_->State()["Faults"].size());
  for (const auto& op : Ec2Operations()) {
    EXPECT_EQ("no error", ErrorCode([&] { cloud_->SetFault(op, Fault{}); })) << op;
  }
  EXPECT_EQ(Ec2Operations().size(), cloud_->State()["Faults"].size());
}

TEST_F(FakesEbsCloud, FaultsHitTheirCountThenStop) {
  cloud_ = MakeCloud();
  Fault f;
  f.error_code = "RequestLimitExceeded";
  f.count = 2;
  cloud_->SetFault("AttachVolume", f);
  EXPECT_TRUE(cloud_->TakeFault("AttachVolume"));
  EXPECT_TRUE(cloud_->TakeFault("AttachVolume"));
  EXPECT_FALSE(cloud_->TakeFault("AttachVolume"));
  EXPECT_FALSE(cloud_->TakeFault("DetachVolume"));
  f.count = -1;
  f.error_rate = 0;
  cloud_->SetFault("DetachVolume", f);
  EXPECT_FALSE(cloud_->TakeFault("DetachVolume"));
  cloud_->ClearFaults();
  EXPECT_EQ(0u, cloud_->State()["Faults"].size());
}

}  // namespace
}  // namespace flexkit::fakes::ebs
