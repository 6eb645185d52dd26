// convoy-fake cloud through its socket: the EC2 and admin routes (snapshots
// included), fault injection by operation name (error codes, stuck
// transitions, dropped connections, latency), bad input, and a
// daemon rolling back a create whose attach the cloud refused.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::testing {
namespace {

using nlohmann::json;

class FakesCloudApi : public ::testing::Test {
 protected:
  void SetUp() override {
    cloud_ = std::make_unique<FakeProcess>(std::vector<std::string>{
        ConvoyFakeBinary(), "cloud", "--socket", Path("cloud.sock"), "--state-dir", Path("cloud")});
  }
  void TearDown() override {
    if (daemon_) {
      EXPECT_EQ(0, daemon_->Stop());
    }
    json state = Call("GET", "/admin/state").second;
    EXPECT_TRUE(state["Violations"].empty());
    EXPECT_EQ(0, cloud_->Stop());
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const json& body = json::object()) {
    HttpConnection c(Path("cloud.sock"));
    RawResponse r =
        c.Request(method, path, method == "GET" ? std::nullopt : std::optional(body.dump()));
    return {r.status, json::parse(r.body)};
  }
  void Fault(const json& fault) { ASSERT_EQ(200, Call("POST", "/admin/faults", fault).first); }

  flexkit::testing::TempDir dir_{"cf-cloudapi"};
  std::unique_ptr<FakeProcess> cloud_, daemon_;
};

TEST_F(FakesCloudApi, Ec2ErrorsComeBackAsCodeAndMessage) {
  auto [status, body] =
      Call("POST", "/ec2/DescribeVolumes", {{"VolumeIds", {"vol-00000000000000000"}}});
  EXPECT_EQ(400, status);
  EXPECT_EQ("InvalidVolume.NotFound", body["Error"]["Code"]);
  EXPECT_EQ("The volume 'vol-00000000000000000' does not exist.", body["Error"]["Message"]);
  auto [s2, io1] = Call("POST", "/ec2/CreateVolume", {{"Size", 1}, {"VolumeType", "io1"}});
  EXPECT_EQ("InvalidParameterDependency", io1["Error"]["Code"]);
}

TEST_F(FakesCloudApi, MalformedBodiesAndUnknownRoutesChangeNothing) {
  HttpConnection c(Path("cloud.sock"));
  RawResponse bad = c.Request("POST", "/ec2/CreateVolume", std::string("{\"Size\":"));
  EXPECT_EQ(400, bad.status);
  EXPECT_EQ("MalformedInput", json::parse(bad.body)["Error"]["Code"]);
  EXPECT_EQ(400, Call("POST", "/ec2/CreateVolume", {{"Size", "ten"}}).first);
  EXPECT_EQ(404, Call("POST", "/ec2/RebootEverything").first);
  EXPECT_TRUE(Call("GET", "/admin/state").second["Volumes"].empty());
}

TEST_F(FakesCloudApi, SnapshotRoutesCreateDescribeRestoreAndDelete) {
  std::string v = Call("POST", "/ec2/CreateVolume", {{"Size", 2}}).second["VolumeId"];
  auto [created_status, created] =
      Call("POST", "/ec2/CreateSnapshot",
           {{"VolumeId", v}, {"Description", "nightly"}, {"Tags", {{"Owner", "test"}}}});
  ASSERT_EQ(200, created_status) << created.dump();
  std::string snap = created["SnapshotId"];
  auto [described_status, described] =
      Call("POST", "/ec2/DescribeSnapshots", {{"SnapshotIds", {snap}}});
  ASSERT_EQ(200, described_status);
  json s = described["Snapshots"][0];
  EXPECT_EQ(v, s["VolumeId"]);
  EXPECT_EQ(2, s["VolumeSize"]);
  EXPECT_EQ("completed", s["State"]);
  EXPECT_EQ("nightly", s["Description"]);
  EXPECT_EQ("test", s["Tags"]["Owner"]);
  EXPECT_EQ(1u,
            Call("POST", "/ec2/DescribeSnapshots", {{"VolumeId", v}}).second["Snapshots"].size());
  auto [restored_status, restored] = Call("POST", "/ec2/CreateVolume", {{"SnapshotId", snap}});
  ASSERT_EQ(200, restored_status) << restored.dump();
  EXPECT_EQ(snap, restored["SnapshotId"]);
  EXPECT_EQ(2, restored["Size"]);
  EXPECT_EQ(1u, Call("GET", "/admin/state").second["Snapshots"].size());
  EXPECT_EQ(200, Call("POST", "/ec2/DeleteSnapshot", {{"SnapshotId", snap}}).first);
  auto [gone_status, gone] = Call("POST", "/ec2/DeleteSnapshot", {{"SnapshotId", snap}});
  EXPECT_EQ(400, gone_status);
  EXPECT_EQ("InvalidSnapshot.NotFound", gone["Error"]["Code"]);
  EXPECT_EQ("The snapshot '" + snap + "' does not exist.", gone["Error"]["Message"]);
}

TEST_F(FakesCloudApi, FaultsApplyToSnapshotOperationsByName) {
  std::string v = Call("POST", "/ec2/CreateVolume", {{"Size", 1}}).second["VolumeId"];
  Fault({{"Operation", "CreateSnapshot"}, {"ErrorCode", "SnapshotLimitExceeded"}, {"Count", 1}});
  auto [failed_status, failed] = Call("POST", "/ec2/CreateSnapshot", {{"VolumeId", v}});
  EXPECT_EQ(400, failed_status);
  EXPECT_EQ("SnapshotLimitExceeded", failed["Error"]["Code"]);
  EXPECT_EQ("Injected fault on CreateSnapshot", failed["Error"]["Message"]);
  EXPECT_TRUE(Call("GET", "/admin/state").second["Snapshots"].empty())
      << "a failed call changes nothing";
  Fault({{"Operation", "CreateSnapshot"}, {"Stuck", true}, {"Count", 1}});
  std::string stuck = Call("POST", "/ec2/CreateSnapshot", {{"VolumeId", v}}).second["SnapshotId"];
  std::string normal = Call("POST", "/ec2/CreateSnapshot", {{"VolumeId", v}}).second["SnapshotId"];
  json described =
      Call("POST", "/ec2/DescribeSnapshots", {{"SnapshotIds", {stuck, normal}}}).second;
  EXPECT_EQ("pending", described["Snapshots"][0]["State"]);
  EXPECT_EQ("completed", described["Snapshots"][1]["State"]);
  Fault({{"Operation", "DescribeSnapshots"}, {"LatencyMs", 300}, {"Count", 1}});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(200, Call("POST", "/ec2/DescribeSnapshots", json::object()).first);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(FakesCloudApi, InjectedErrorHitsItsCountThenClears) {
  Fault({{"Operation", "CreateVolume"}, {"ErrorCode", "RequestLimitExceeded"}, {"Count", 1}});
  auto [s1, first] = Call("POST", "/ec2/CreateVolume", {{"Size", 1}});
  EXPECT_EQ("RequestLimitExceeded", first["Error"]["Code"]);
  EXPECT_EQ(200, Call("POST", "/ec2/CreateVolume", {{"Size", 1}}).first);
  Fault({{"Operation", "CreateVolume"}, {"ErrorCode", "InternalError"}});
  EXPECT_EQ(400, Call("POST", "/ec2/CreateVolume", {{"Size", 1}}).first);
  EXPECT_EQ(200, Call("DELETE", "/admin/faults").first);
  EXPECT_EQ(200, Call("POST", "/ec2/CreateVolume", {{"Size", 1}}).first);
  EXPECT_EQ(2u, Call("GET", "/admin/state").second["Volumes"].size());
}

TEST_F(FakesCloudApi, DroppedConnectionGetsNoAnswer) {
  Fault({{"Operation", "DescribeInstances"}, {"DropConnection", true}, {"Count", 1}});
  HttpConnection c(Path("cloud.sock"));
  c.Send(BuildRequest("POST", "/ec2/DescribeInstances", std::string("{}"), "test"));
  EXPECT_THROW(c.Read(), std::runtime_error);
  EXPECT_EQ(200, Call("POST", "/ec2/DescribeInstances").first);
}

TEST_F(FakesCloudApi, InjectedLatencyDelaysTheAnswer) {
  Fault({{"Operation", "DescribeInstances"}, {"LatencyMs", 300}, {"Count", 1}});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(200, Call("POST", "/ec2/DescribeInstances").first);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(FakesCloudApi, InstancesStartStopTerminate) {
  std::string id = Call("POST", "/admin/instances", {{"Host", "node-a"}}).second["InstanceId"];
  EXPECT_EQ("stopped", Call("POST", "/admin/instances/" + id + "/stop").second["State"]);
  auto described = Call("POST", "/ec2/DescribeInstances", {{"InstanceIds", {id}}}).second;
  EXPECT_EQ("stopped", described["Instances"][0]["State"]);
  EXPECT_EQ(200, Call("POST", "/admin/instances/" + id + "/start").first);
  EXPECT_EQ(200, Call("POST", "/admin/instances/" + id + "/terminate").first);
  EXPECT_EQ("IncorrectInstanceState",
            Call("POST", "/admin/instances/" + id + "/start").second["Error"]["Code"]);
  EXPECT_EQ("InvalidInstanceID.NotFound",
            Call("POST", "/admin/instances/i-00000000000000000/stop").second["Error"]["Code"]);
}

TEST_F(FakesCloudApi, DaemonRollsBackACreateWhoseAttachFailed) {
  std::string id = Call("POST", "/admin/instances", {{"Host", "a"}}).second["InstanceId"];
  daemon_ = std::make_unique<FakeProcess>(std::vector<std::string>{
      ConvoyFakeBinary(), "daemon", "--socket", Path("a.sock"), "--state-dir", Path("a"),
      "--drivers", "ebs", "--cloud", Path("cloud.sock"), "--instance-id", id});
  Fault({{"Operation", "AttachVolume"}, {"ErrorCode", "RequestLimitExceeded"}, {"Count", 1}});
  HttpConnection c(Path("a.sock"));
  RawResponse r =
      c.Request("POST", "/v1/volumes/create", std::string(R"({"Name":"vol1"})"), "Convoy-Client/1");
  EXPECT_EQ(400, r.status);
  EXPECT_EQ(0u, r.body.rfind("AWS Error:  RequestLimitExceeded Injected fault on AttachVolume", 0))
      << r.body;
  EXPECT_TRUE(Call("GET", "/admin/state").second["Volumes"].empty())
      << "the new volume must be deleted";
  HttpConnection again(Path("a.sock"));
  EXPECT_EQ("{}", again.Request("GET", "/v1/volumes/list").body);
}

TEST_F(FakesCloudApi, DaemonRefusesAnUnknownInstance) {
  Finished r =
      RunConvoyFake({"daemon", "--socket", Path("b.sock"), "--state-dir", Path("b"), "--drivers",
                     "ebs", "--cloud", Path("cloud.sock"), "--instance-id", "i-00000000000000000"});
  EXPECT_EQ(1, r.exit_code);
  EXPECT_NE(std::string::npos, r.err.find("i-00000000000000000")) << r.err;
}

}  // namespace
}  // namespace flexkit::fakes::testing

namespace flexkit::fakes::testing {
namespace {

// Command lines: usage errors exit 2 with a reason and start nothing.
TEST(FakesCommandLine, UsageErrorsExitTwoWithTheReason) {
  flexkit::testing::TempDir dir("convoy-fake-usage");
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), ConvoyFakeBinary());
    return flexkit::testing::RunProcess(args);
  };
  auto no_state = run({"daemon"});
  EXPECT_EQ(no_state.exit_code, 2);
  EXPECT_NE(no_state.err.find("--state-dir is required"), std::string::npos) << no_state.err;
  for (const std::string mode : {"0888", "abc", "", "10000"}) {
    auto bad = run({"cloud", "--state-dir", dir.path(), "--socket", dir.Join("c.sock"),
                    "--socket-mode", mode});
    EXPECT_EQ(bad.exit_code, 2) << mode << ": " << bad.err;
    EXPECT_NE(bad.err.find("octal file mode"), std::string::npos) << bad.err;
    EXPECT_EQ(bad.err.find("stoul"), std::string::npos) << bad.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.Join("c.sock")));
  auto version = run({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string("convoy-fake ") + FLEXKIT_VERSION + "\n");
}

}  // namespace
}  // namespace flexkit::fakes::testing
