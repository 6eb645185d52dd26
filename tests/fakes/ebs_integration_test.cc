// convoy-fake cloud + daemons for real (root): loop devices, mkfs, mount(2)
// inside each daemon's private mount namespace, failover between hosts, EBS
// snapshots and backups restored into new volumes, Convoy's error texts for
// them, and nothing left behind (no loop device, no mount, no process).
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::testing {
namespace {

using nlohmann::json;

std::vector<std::string> LoopDevicesUnder(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir("/sys/block");
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    std::string name = e->d_name;
    if (name.rfind("loop", 0) != 0) continue;
    std::ifstream f("/sys/block/" + name + "/loop/backing_file");
    std::string backing;
    if (std::getline(f, backing) && backing.rfind(dir, 0) == 0) out.push_back("/dev/" + name);
  }
  if (d) ::closedir(d);
  return out;
}

// Mount points (field 5 of mountinfo) under `dir` in process `pid`'s namespace.
std::vector<std::string> MountsUnder(pid_t pid, const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/mountinfo");
  for (std::string line; std::getline(f, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    if (mount_point.rfind(dir, 0) == 0) out.push_back(mount_point);
  }
  return out;
}

class FakesEbsIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!flexkit::testing::IsRoot()) GTEST_SKIP() << "needs root: loop devices, mkfs and mounts";
    cloud_ = std::make_unique<FakeProcess>(std::vector<std::string>{
        ConvoyFakeBinary(), "cloud", "--socket", Path("cloud.sock"), "--state-dir", Path("cloud")});
  }

  void TearDown() override {
    for (auto& [host, daemon] : daemons_) {
      if (daemon->running()) {
        EXPECT_EQ(0, daemon->Stop()) << "daemon " << host;
      }
    }
    if (cloud_) {
      // Whatever a test left attached is released here, then audited.
      json state = Admin("GET", "/admin/state");
      EXPECT_TRUE(state["Violations"].empty()) << state["Violations"].dump();
      for (auto& v : state["Volumes"]) {
        if (!v["Attachments"].empty()) {
          Ec2("DetachVolume", {{"VolumeId", v["VolumeId"]}, {"Force", true}});
        }
      }
      EXPECT_EQ(0, cloud_->Stop());
      EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty());
    }
  }

  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  json Admin(const std::string& method, const std::string& path,
             const json& body = json::object()) {
    HttpConnection c(Path("cloud.sock"));
    RawResponse r =
        c.Request(method, path, method == "GET" ? std::nullopt : std::optional(body.dump()));
    EXPECT_EQ(200, r.status) << path << ": " << r.body;
    return json::parse(r.body);
  }
  json Ec2(const std::string& op, const json& body) { return Admin("POST", "/ec2/" + op, body); }

  std::string StartHost(const std::string& host) {
    std::string instance = Admin("POST", "/admin/instances", {{"Host", host}})["InstanceId"];
    daemons_[host] = std::make_unique<FakeProcess>(
        InPrivateMountNamespace({ConvoyFakeBinary(), "daemon", "--socket", Path(host + ".sock"),
                                 "--state-dir", Path(host), "--drivers", "ebs", "--cloud",
                                 Path("cloud.sock"), "--instance-id", instance, "--host", host}));
    instances_[host] = instance;
    return instance;
  }

  RawResponse Convoy(const std::string& host, const std::string& method, const std::string& path,
                     const json& body) {
    HttpConnection c(Path(host + ".sock"));
    return c.Request(method, path, body.dump(), "Convoy-Client/1");
  }

  // Runs a shell command inside the host daemon's mount namespace.
  flexkit::testing::ProcessResult InHost(const std::string& host, const std::string& command) {
    return flexkit::testing::RunProcess({"/usr/bin/nsenter", "--target",
                                         std::to_string(daemons_[host]->pid()), "--mount",
                                         "/bin/sh", "-c", command});
  }

  std::string CreateAndMount(const std::string& host, const json& create) {
    RawResponse created = Convoy(host, "POST", "/v1/volumes/create", create);
    EXPECT_EQ(200, created.status) << created.body;
    RawResponse mounted =
        Convoy(host, "POST", "/v1/volumes/mount", {{"VolumeName", create["Name"]}});
    EXPECT_EQ(200, mounted.status) << mounted.body;
    return mounted.body;
  }

  void Lifecycle(const std::string& fs) {
    StartHost("a");
    RawResponse created =
        Convoy("a", "POST", "/v1/volumes/create",
               {{"Name", "data"}, {"Size", 512LL << 20}, {"FSType", fs}, {"Verbose", true}});
    ASSERT_EQ(200, created.status) << created.body;
    json info = json::parse(created.body)["DriverInfo"];
    EXPECT_EQ(Path("a") + "/dev/xvdf", info["Device"]);
    EXPECT_EQ("in-use", info["State"]);
    auto blkid =
        flexkit::testing::RunProcess({"/sbin/blkid", "-o", "value", "-s", "TYPE", info["Device"]});
    EXPECT_EQ(fs + "\n", blkid.out);
    RawResponse mounted = Convoy("a", "POST", "/v1/volumes/mount", {{"VolumeName", "data"}});
    ASSERT_EQ(200, mounted.status) << mounted.body;
    std::string mp = mounted.body;
    EXPECT_EQ(std::vector<std::string>{mp}, MountsUnder(daemons_["a"]->pid(), dir_.path()));
    EXPECT_TRUE(MountsUnder(::getpid(), dir_.path()).empty())
        << "mounted outside the private namespace";
    auto wrote = InHost("a", "echo hello > " + mp + "/f && sync && cat " + mp + "/f");
    EXPECT_EQ("hello\n", wrote.out) << wrote.err;
    EXPECT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", "data"}}).status);
    EXPECT_TRUE(MountsUnder(daemons_["a"]->pid(), dir_.path()).empty());
    EXPECT_EQ(200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "data"}}).status);
    EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty());
    EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"].empty());
  }

  flexkit::testing::TempDir dir_{"cf-ebs"};
  std::unique_ptr<FakeProcess> cloud_;
  std::map<std::string, std::unique_ptr<FakeProcess>> daemons_;
  std::map<std::string, std::string> instances_;
};

TEST_F(FakesEbsIntegration, Ext4CreateAttachFormatMountWriteUnmountDetach) { Lifecycle("ext4"); }

TEST_F(FakesEbsIntegration, XfsCreateAttachFormatMountWriteUnmountDetach) { Lifecycle("xfs"); }

TEST_F(FakesEbsIntegration, AnotherFilesystemOnTheDeviceIsAnErrorNeverAReformat) {
  StartHost("a");
  std::string mp = CreateAndMount("a", {{"Name", "first"}, {"Size", 512LL << 20}});
  InHost("a", "echo kept > " + mp + "/f && sync");
  ASSERT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", "first"}}).status);
  std::string id = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "first"}})
                                   .body)["DriverInfo"]["EBSVolumeID"];
  ASSERT_EQ(
      200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "first"}, {"ReferenceOnly", true}})
               .status);
  RawResponse refused = Convoy(
      "a", "POST", "/v1/volumes/create",
      {{"Name", "second"}, {"DriverName", "ebs"}, {"DriverVolumeID", id}, {"FSType", "xfs"}});
  EXPECT_EQ(400, refused.status);
  EXPECT_NE(std::string::npos, refused.body.find("refusing to reformat")) << refused.body;
  EXPECT_TRUE(Ec2("DescribeVolumes", {{"VolumeIds", {id}}})["Volumes"][0]["Attachments"].empty())
      << "a failed adoption must leave the volume detached";
  std::string again = CreateAndMount("a", {{"Name", "second"}, {"DriverVolumeID", id}});
  EXPECT_EQ("kept\n", InHost("a", "cat " + again + "/f").out);
  ASSERT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", "second"}}).status);
  ASSERT_EQ(200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "second"}}).status);
  Ec2("DeleteVolume", {{"VolumeId", id}});
}

TEST_F(FakesEbsIntegration, FailoverFromAStoppedInstanceKeepsTheDataAndALateDetachIsHarmless) {
  std::string a = StartHost("a");
  std::string b = StartHost("b");
  std::string mp = CreateAndMount("a", {{"Name", "pv1"}, {"Size", 512LL << 20}});
  ASSERT_EQ("", InHost("a", "echo precious > " + mp + "/data && sync").err);
  std::string id = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "pv1"}})
                                   .body)["DriverInfo"]["EBSVolumeID"];

  RawResponse stolen =
      Convoy("b", "POST", "/v1/volumes/create", {{"Name", "pv1"}, {"DriverVolumeID", id}});
  EXPECT_EQ(400, stolen.status);
  EXPECT_EQ(
      "can't re-use ebs volumeID: " + id + " from instanceID: " + a + ", instance is running\n",
      stolen.body);

  Admin("POST", "/admin/instances/" + a + "/stop");
  // Host a still has it mounted: the detach stays busy, so b forces it.
  std::string mp_b = CreateAndMount("b", {{"Name", "pv1"}, {"DriverVolumeID", id}});
  EXPECT_EQ("precious\n", InHost("b", "cat " + mp_b + "/data").out);
  json attachment = Ec2("DescribeVolumes", {{"VolumeIds", {id}}})["Volumes"][0]["Attachments"][0];
  EXPECT_EQ(b, attachment["InstanceId"]);

  // The old host comes back and tears down late: b's attachment stays.
  Admin("POST", "/admin/instances/" + a + "/start");
  EXPECT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", "pv1"}}).status);
  EXPECT_EQ(200,
            Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "pv1"}, {"ReferenceOnly", true}})
                .status);
  attachment = Ec2("DescribeVolumes", {{"VolumeIds", {id}}})["Volumes"][0]["Attachments"][0];
  EXPECT_EQ(b, attachment["InstanceId"]);
  EXPECT_EQ("attached", attachment["State"]);
  EXPECT_EQ("precious\n", InHost("b", "cat " + mp_b + "/data").out);

  ASSERT_EQ(200, Convoy("b", "POST", "/v1/volumes/umount", {{"VolumeName", "pv1"}}).status);
  ASSERT_EQ(200, Convoy("b", "DELETE", "/v1/volumes/", {{"VolumeName", "pv1"}}).status);
  Ec2("DeleteVolume", {{"VolumeId", id}});
  EXPECT_TRUE(Admin("GET", "/admin/violations")["Violations"].empty());
}

TEST_F(FakesEbsIntegration, RestartedDaemonRemountsOnlyWhatIsStillAttachedHere) {
  std::string a = StartHost("a");
  std::string b = StartHost("b");
  std::string mp1 = CreateAndMount("a", {{"Name", "stays"}, {"Size", 512LL << 20}});
  std::string mp2 = CreateAndMount("a", {{"Name", "moves"}, {"Size", 512LL << 20}});
  std::string moving = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "moves"}})
                                       .body)["DriverInfo"]["EBSVolumeID"];
  ASSERT_EQ(0, daemons_["a"]->Stop());  // the host's namespace and its mounts are gone
  Admin("POST", "/admin/instances/" + a + "/stop");
  std::string mp_b = CreateAndMount("b", {{"Name", "moves"}, {"DriverVolumeID", moving}});
  Admin("POST", "/admin/instances/" + a + "/start");
  StartHost("a");
  EXPECT_EQ(std::vector<std::string>{mp1}, MountsUnder(daemons_["a"]->pid(), dir_.path()));
  json moved = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "moves"}}).body);
  EXPECT_EQ("false", moved["DriverInfo"]["Attached"]);
  EXPECT_EQ("", moved["MountPoint"]);
  EXPECT_EQ(b, Ec2("DescribeVolumes",
                   {{"VolumeIds", {moving}}})["Volumes"][0]["Attachments"][0]["InstanceId"]);
  for (const char* name : {"stays"}) {
    ASSERT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", name}}).status);
    ASSERT_EQ(200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", name}}).status);
  }
  ASSERT_EQ(
      200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "moves"}, {"ReferenceOnly", true}})
               .status);
  ASSERT_EQ(200, Convoy("b", "POST", "/v1/volumes/umount", {{"VolumeName", "moves"}}).status);
  ASSERT_EQ(200, Convoy("b", "DELETE", "/v1/volumes/", {{"VolumeName", "moves"}}).status);
  Ec2("DeleteVolume", {{"VolumeId", moving}});
}

TEST_F(FakesEbsIntegration, SnapshotBackupAndRestoreCarryTheDataToANewVolume) {
  StartHost("a");
  std::string mp = CreateAndMount("a", {{"Name", "src"}, {"Size", 512LL << 20}});
  ASSERT_EQ("",
            InHost("a", "echo snapshot-me > " + mp + "/data").err);  // no sync: the daemon syncs
  RawResponse snapped =
      Convoy("a", "POST", "/v1/snapshots/create", {{"Name", "snap1"}, {"VolumeName", "src"}});
  ASSERT_EQ(200, snapped.status) << snapped.body;
  EXPECT_EQ("snap1", snapped.body);
  InHost("a", "echo changed-later > " + mp + "/data && sync");

  json inspected =
      json::parse(Convoy("a", "GET", "/v1/snapshots/", {{"SnapshotName", "snap1"}}).body);
  EXPECT_EQ("src", inspected["VolumeName"]);
  json info = inspected["DriverInfo"];
  EXPECT_EQ("ebs", info["Driver"]);
  EXPECT_EQ("completed", info["State"]);
  EXPECT_EQ(std::to_string(1LL << 30), info["Size"]);
  std::string snap_id = info["EBSSnapshotID"];
  json cloud_snapshot = Ec2("DescribeSnapshots", {{"SnapshotIds", {snap_id}}})["Snapshots"][0];
  EXPECT_EQ(info["EBSVolumeID"], cloud_snapshot["VolumeId"]);
  EXPECT_EQ("snap1", cloud_snapshot["Tags"]["ConvoySnapshotName"]);
  EXPECT_EQ("src", cloud_snapshot["Tags"]["ConvoyVolumeName"]);
  json volume = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "src"}}).body);
  EXPECT_EQ(snap_id, volume["Snapshots"]["snap1"]["DriverInfo"]["EBSSnapshotID"]);

  RawResponse backup = Convoy("a", "POST", "/v1/backups/create",
                              {{"SnapshotName", "snap1"}, {"URL", "vfs:///ignored"}});
  ASSERT_EQ(200, backup.status) << backup.body;
  EXPECT_EQ("ebs://us-east-1/" + snap_id, backup.body);
  json listed = json::parse(Convoy("a", "GET", "/v1/backups/list", {{"VolumeName", "src"}}).body);
  EXPECT_EQ(snap_id, listed[backup.body]["EBSSnapshotID"]);
  EXPECT_EQ("snap1", listed[backup.body]["SnapshotName"]);
  json backup_info =
      json::parse(Convoy("a", "GET", "/v1/backups/inspect", {{"URL", backup.body}}).body);
  EXPECT_EQ("completed", backup_info["State"]);
  EXPECT_EQ("src", backup_info["VolumeName"]);

  // The daemon's records keep the snapshot across a restart (its index is rebuilt from them).
  ASSERT_EQ(0, daemons_["a"]->Stop());
  StartHost("a");
  EXPECT_EQ(snap_id, json::parse(Convoy("a", "GET", "/v1/snapshots/", {{"SnapshotName", "snap1"}})
                                     .body)["DriverInfo"]["EBSSnapshotID"]);

  std::string copy_mp = CreateAndMount("a", {{"Name", "copy"}, {"BackupURL", backup.body}});
  EXPECT_EQ("snapshot-me\n", InHost("a", "cat " + copy_mp + "/data").out);
  json copy = json::parse(Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "copy"}}).body);
  EXPECT_EQ(std::to_string(1LL << 30), copy["DriverInfo"]["Size"]);
  EXPECT_EQ("ext4", copy["DriverInfo"]["FSType"]);
  EXPECT_EQ("changed-later\n", InHost("a", "cat " + mp + "/data").out);

  // Deleting the Convoy snapshot keeps the backup; deleting the backup
  // deletes the EBS snapshot.
  EXPECT_EQ(200, Convoy("a", "DELETE", "/v1/snapshots/", {{"SnapshotName", "snap1"}}).status);
  EXPECT_EQ(1u, Ec2("DescribeSnapshots", json::object())["Snapshots"].size());
  EXPECT_EQ(200, Convoy("a", "DELETE", "/v1/backups", {{"URL", backup.body}}).status);
  EXPECT_TRUE(Ec2("DescribeSnapshots", json::object())["Snapshots"].empty());
  for (const char* name : {"src", "copy"}) {
    ASSERT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", name}}).status);
    ASSERT_EQ(200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", name}}).status);
  }
  EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty());
}

TEST_F(FakesEbsIntegration, SnapshotAndBackupErrorsHaveConvoysTexts) {
  std::string a = StartHost("a");
  auto body_of = [&](const std::string& method, const std::string& path, const json& request) {
    RawResponse r = Convoy("a", method, path, request);
    EXPECT_EQ(400, r.status) << path << " " << request.dump();
    return r.body;
  };
  EXPECT_EQ("volume nosuch doesn't exist\n",
            body_of("POST", "/v1/snapshots/create", {{"Name", "s1"}, {"VolumeName", "nosuch"}}));
  EXPECT_EQ("cannot find volume for snapshot nosnap\n",
            body_of("GET", "/v1/snapshots/", {{"SnapshotName", "nosnap"}}));
  EXPECT_EQ("Cannot find volume of snapshot nosnap\n",
            body_of("POST", "/v1/backups/create", {{"SnapshotName", "nosnap"}}));
  EXPECT_EQ(
      "Snapshot snap-0123456789abcdef0 is at us-west-2 rather than current region us-east-1. "
      "Copy snapshot is needed\n",
      body_of("GET", "/v1/backups/inspect", {{"URL", "ebs://us-west-2/snap-0123456789abcdef0"}}));
  EXPECT_EQ("Invalid EBS backup URL ebs://us-east-1/vol-1: expected ebs://<region>/snap-<id>\n",
            body_of("DELETE", "/v1/backups", {{"URL", "ebs://us-east-1/vol-1"}}));
  EXPECT_EQ(
      "AWS Error:  InvalidSnapshot.NotFound The snapshot 'snap-00000000000000000' does not "
      "exist. <nil>\n400 convoy-fake\n",
      body_of("GET", "/v1/backups/inspect", {{"URL", "ebs://us-east-1/snap-00000000000000000"}}));

  // A restore smaller than its snapshot is refused before anything is made.
  std::string big = Ec2("CreateVolume", {{"Size", 2}})["VolumeId"];
  std::string snap = Ec2("CreateSnapshot", {{"VolumeId", big}})["SnapshotId"];
  EXPECT_EQ(
      "AWS Error:  InvalidParameterValue Volume of 1GiB is smaller than snapshot '" + snap +
          "', expect size >= 2GiB <nil>\n400 convoy-fake\n",
      body_of("POST", "/v1/volumes/create",
              {{"Name", "small"}, {"BackupURL", "ebs://us-east-1/" + snap}, {"Size", 1LL << 30}}));
  EXPECT_EQ(1u, Admin("GET", "/admin/state")["Volumes"].size());

  // A refused CreateSnapshot leaves no snapshot and no name behind.
  std::string mp = CreateAndMount("a", {{"Name", "vol"}, {"Size", 512LL << 20}});
  Admin("POST", "/admin/faults",
        {{"Operation", "CreateSnapshot"}, {"ErrorCode", "SnapshotLimitExceeded"}, {"Count", 1}});
  EXPECT_EQ(
      "AWS Error:  SnapshotLimitExceeded Injected fault on CreateSnapshot <nil>\n400 "
      "convoy-fake\n",
      body_of("POST", "/v1/snapshots/create", {{"Name", "s1"}, {"VolumeName", "vol"}}));
  EXPECT_EQ(1u, Ec2("DescribeSnapshots", json::object())["Snapshots"].size());
  EXPECT_EQ(
      200,
      Convoy("a", "POST", "/v1/snapshots/create", {{"Name", "s1"}, {"VolumeName", "vol"}}).status);
  EXPECT_EQ("Snapshot name s1 already exists\n",
            body_of("POST", "/v1/snapshots/create", {{"Name", "s1"}, {"VolumeName", "vol"}}));
  // A cloud that fails to describe snapshots does not fail the volume's inspect.
  Admin("POST", "/admin/faults",
        {{"Operation", "DescribeSnapshots"}, {"ErrorCode", "RequestLimitExceeded"}, {"Count", 1}});
  RawResponse inspected = Convoy("a", "GET", "/v1/volumes/", {{"VolumeName", "vol"}});
  ASSERT_EQ(200, inspected.status) << inspected.body;
  EXPECT_EQ("unknown: Injected fault on DescribeSnapshots",
            json::parse(inspected.body)["Snapshots"]["s1"]["DriverInfo"]["State"]);
  ASSERT_EQ(200, Convoy("a", "POST", "/v1/volumes/umount", {{"VolumeName", "vol"}}).status);
  ASSERT_EQ(200, Convoy("a", "DELETE", "/v1/volumes/", {{"VolumeName", "vol"}}).status);
  Ec2("DeleteVolume", {{"VolumeId", big}});
}

TEST_F(FakesEbsIntegration, CloudKilledWithSigkillAccountsForEveryVolumeSnapshotAndLoopDevice) {
  std::string a = Admin("POST", "/admin/instances", {{"Host", "a"}})["InstanceId"];
  std::string v1 = Ec2("CreateVolume", {{"Size", 1}})["VolumeId"];
  std::string v2 = Ec2("CreateVolume", {{"Size", 1}})["VolumeId"];
  std::string loop = Ec2("AttachVolume", {{"VolumeId", v1}, {"InstanceId", a}})["LoopDevice"];
  std::string snap = Ec2("CreateSnapshot", {{"VolumeId", v2}})["SnapshotId"];
  cloud_->Kill();
  cloud_ = std::make_unique<FakeProcess>(std::vector<std::string>{
      ConvoyFakeBinary(), "cloud", "--socket", Path("cloud.sock"), "--state-dir", Path("cloud")});
  json state = Admin("GET", "/admin/state");
  ASSERT_EQ(2u, state["Volumes"].size());
  json attached = Ec2("DescribeVolumes", {{"VolumeIds", {v1}}})["Volumes"][0];
  EXPECT_EQ(a, attached["Attachments"][0]["InstanceId"]);
  EXPECT_EQ(loop, attached["Attachments"][0]["LoopDevice"]);
  EXPECT_EQ("available", Ec2("DescribeVolumes", {{"VolumeIds", {v2}}})["Volumes"][0]["State"]);
  EXPECT_EQ(std::vector<std::string>{loop}, LoopDevicesUnder(dir_.path()));
  json snapshot = Ec2("DescribeSnapshots", {{"SnapshotIds", {snap}}})["Snapshots"][0];
  EXPECT_EQ(v2, snapshot["VolumeId"]);
  EXPECT_EQ("completed", snapshot["State"]);
  Ec2("DeleteSnapshot", {{"SnapshotId", snap}});
  Ec2("DetachVolume", {{"VolumeId", v1}, {"InstanceId", a}});
  Ec2("DeleteVolume", {{"VolumeId", v1}});
  Ec2("DeleteVolume", {{"VolumeId", v2}});
  EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty());
}

// One curl example of fakes/README.md: `$S` (the daemon) or `$C` (the cloud),
// the method, the body and the path.
struct ReadmeExample {
  std::string line, server, method, path;
  std::optional<std::string> body;
};

// Every `$S ...` and `$C ...` line of the README's code blocks, in order:
// words split as the shell splits them ('...' quoted), `# comment` dropped.
std::vector<ReadmeExample> ReadmeExamples(const std::string& readme) {
  std::vector<ReadmeExample> out;
  std::istringstream in(readme);
  bool in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) in_block = !in_block;
    if (!in_block || !(line.starts_with("$S ") || line.starts_with("$C "))) continue;
    std::vector<std::string> words;
    std::string word;
    bool quoted = false, in_word = false;
    for (char c : line) {
      if (c == '\'') {
        quoted = !quoted;
        in_word = true;
      } else if (!quoted && c == '#' && !in_word) {
        break;
      } else if (!quoted && c == ' ') {
        if (in_word) words.push_back(word);
        word.clear();
        in_word = false;
      } else {
        word += c;
        in_word = true;
      }
    }
    if (in_word) words.push_back(word);
    ReadmeExample e{line, words[0], "", "", std::nullopt};
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i] == "-X") {
        e.method = words[++i];
      } else if (words[i] == "-d") {
        e.body = words[++i];
      } else if (words[i].starts_with("http://x/")) {
        e.path = words[i].substr(8);
      }
    }
    if (e.method.empty()) e.method = e.body ? "POST" : "GET";
    out.push_back(e);
  }
  return out;
}

TEST_F(FakesEbsIntegration, ReadmeExamplesWorkAsWritten) {
  std::ifstream file(std::string(FLEXKIT_SOURCE_DIR) + "/fakes/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  std::vector<ReadmeExample> examples = ReadmeExamples(readme.str());
  ASSERT_GE(examples.size(), 30u) << "the README's curl examples were not found";
  // The README writes ids as placeholders: each stands for the id of its
  // kind that the latest answer naming one gave.
  std::map<std::string, std::string> ids = {{"i", StartHost("node-a")}};
  const std::regex id_pattern("\\b(i|vol|snap)-[0-9a-f]{17}\\b");
  for (const ReadmeExample& e : examples) {
    auto with_ids = [&](std::string text) {
      for (const auto& [kind, id] : ids) {
        std::string placeholder = kind + "-0123456789abcdef0";
        for (size_t pos = 0; (pos = text.find(placeholder, pos)) != std::string::npos;) {
          text.replace(pos, placeholder.size(), id);
          pos += id.size();
        }
      }
      return text;
    };
    std::optional<std::string> body;
    if (e.body) body = with_ids(*e.body);
    HttpConnection c(Path(e.server == "$S" ? "node-a.sock" : "cloud.sock"));
    RawResponse r = c.Request(e.method, with_ids(e.path), body,
                              e.server == "$S" ? "Convoy-Client/1" : "curl/7.88.1");
    EXPECT_EQ(200, r.status) << e.line << "\n" << r.body;
    EXPECT_EQ(std::string::npos, r.body.find("json.exception")) << e.line << "\n" << r.body;
    std::set<std::string> seen;
    for (std::sregex_iterator it(r.body.begin(), r.body.end(), id_pattern), end; it != end; ++it) {
      // An error may echo a placeholder that had no id yet: not an id.
      if ((*it)[0].str().ends_with("-0123456789abcdef0")) continue;
      if (seen.insert((*it)[1]).second) ids[(*it)[1]] = (*it)[0];
    }
  }
}

}  // namespace
}  // namespace flexkit::fakes::testing
