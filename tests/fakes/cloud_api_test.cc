// convoy-fake cloud through its socket: the EC2 and admin routes (snapshots
// included), fault injection by operation name (error codes, stuck
// transitions, dropped connections, latency), bad input, and a
// daemon rolling back a create whose attach the cloud refused.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
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

// Texts only a library writes (nlohmann's, the C++ library's): a reply must
// say what is wrong with the request instead.
void ExpectNoLibraryText(const std::string& what, const std::string& body) {
  for (const char* text : {"json.exception", "type_error", "parse_error", "out_of_range",
                           "basic_string", "stoi", "what()", "filesystem error"}) {
    EXPECT_EQ(std::string::npos, body.find(text)) << what << ": " << body;
  }
}

TEST_F(FakesCloudApi, BadRequestsGetEc2ErrorsNamingTheFieldAndTypeAndChangeNothing) {
  struct Bad {
    std::string path, body, code, message;
  };
  const std::vector<Bad> cases = {
      {"/ec2/CreateVolume", R"({"Size":)", "MalformedInput",
       "the request body is not valid JSON (at byte 9)"},
      {"/ec2/CreateVolume", "[1]", "MalformedInput",
       "the request body is an array, not a JSON object"},
      {"/ec2/CreateVolume", R"({"Size":"ten"})", "InvalidParameterValue",
       R"(Value ("ten") for parameter Size is invalid: expected an integer, not a string.)"},
      {"/ec2/CreateVolume", R"({"Size":1.5})", "InvalidParameterValue",
       "Value (1.5) for parameter Size is invalid: expected an integer, not this number."},
      {"/ec2/CreateVolume", R"({"Size":18446744073709551615})", "InvalidParameterValue",
       "Value (18446744073709551615) for parameter Size is invalid: expected an integer below "
       "2^63, not this number."},
      {"/ec2/CreateVolume", R"({"Size":1,"VolumeType":2})", "InvalidParameterValue",
       "Value (2) for parameter VolumeType is invalid: expected a string, not this number."},
      {"/ec2/DescribeVolumes", R"({"VolumeIds":"vol-1"})", "InvalidParameterValue",
       R"(Value ("vol-1") for parameter VolumeIds is invalid: expected an array of strings, not a string.)"},
      {"/ec2/DescribeInstances", R"({"InstanceIds":[1]})", "InvalidParameterValue",
       "Value ([1]) for parameter InstanceIds is invalid: expected an array of strings, not an "
       "array."},
      {"/ec2/DetachVolume", R"({"VolumeId":"vol-1","Force":"yes"})", "InvalidParameterValue",
       R"(Value ("yes") for parameter Force is invalid: expected a boolean, not a string.)"},
      {"/ec2/CreateSnapshot", R"({"VolumeId":"vol-1","Tags":{"a":1}})", "InvalidParameterValue",
       R"(Value ({"a":1}) for parameter Tags is invalid: expected an object of strings, not an object.)"},
      {"/ec2/AttachVolume", R"({"InstanceId":"i-1"})", "MissingParameter",
       "The request must contain the parameter VolumeId"},
      {"/ec2/AttachVolume", R"({"VolumeId":"vol-1","InstanceId":null})", "MissingParameter",
       "The request must contain the parameter InstanceId"},
      {"/ec2/DetachVolume", "{}", "MissingParameter",
       "The request must contain the parameter VolumeId"},
      {"/ec2/DeleteVolume", "", "MissingParameter",
       "The request must contain the parameter VolumeId"},
      {"/ec2/CreateSnapshot", "{}", "MissingParameter",
       "The request must contain the parameter VolumeId"},
      {"/ec2/DeleteSnapshot", "{}", "MissingParameter",
       "The request must contain the parameter SnapshotId"},
      {"/admin/instances", R"({"Host":5})", "InvalidParameterValue",
       "Value (5) for parameter Host is invalid: expected a string, not this number."},
      {"/admin/faults", R"({"Operation":"CreateVolume","LatencyMs":"5s"})", "InvalidParameterValue",
       R"(Value ("5s") for parameter LatencyMs is invalid: expected an integer, not a string.)"},
      {"/admin/faults", "{}", "MissingParameter",
       "The request must contain the parameter Operation"},
  };
  for (const Bad& c : cases) {
    HttpConnection conn(Path("cloud.sock"));
    RawResponse r =
        conn.Request("POST", c.path, c.body.empty() ? std::nullopt : std::optional(c.body));
    std::string what = c.path + " " + c.body;
    EXPECT_EQ(400, r.status) << what << ": " << r.body;
    json error = json::parse(r.body)["Error"];
    EXPECT_EQ(c.code, error["Code"]) << what;
    EXPECT_EQ(c.message, error["Message"]) << what;
    ExpectNoLibraryText(what, r.body);
  }
  json state = Call("GET", "/admin/state").second;
  EXPECT_TRUE(state["Volumes"].empty()) << state.dump();
  EXPECT_TRUE(state["Instances"].empty()) << state.dump();
  EXPECT_TRUE(state["Faults"].empty()) << state.dump();
}

TEST_F(FakesCloudApi, FaultOnAnUnknownOperationIsRefusedNamingTheValidOnesAndSetsNothing) {
  const std::string valid =
      "AttachVolume, CreateSnapshot, CreateVolume, DeleteSnapshot, DeleteVolume, "
      "DescribeInstances, DescribeSnapshots, DescribeVolumes, DetachVolume";
  struct Bad {
    json fault;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {{{"Operation", "mount"}, {"LatencyMs", 10}},
       "Value (mount) for parameter Operation is invalid: no such EC2 operation; faults apply "
       "to one of " +
           valid},
      {{{"Operation", "Mount"}, {"ErrorCode", "InternalError"}},
       "Value (Mount) for parameter Operation is invalid: no such EC2 operation; faults apply "
       "to one of " +
           valid},
      {{{"Operation", "attachVolume"}, {"Stuck", true}},
       "Value (attachVolume) for parameter Operation is invalid: no such EC2 operation (names "
       "are case-sensitive: AttachVolume); faults apply to one of " +
           valid},
      {{{"Operation", "AttachVolume"}, {"ErrorRate", 1.5}},
       "Value (1.5) for parameter ErrorRate is invalid: it is a probability, from 0 to 1"},
      {{{"Operation", "AttachVolume"}, {"Count", -2}},
       "Value (-2) for parameter Count is invalid: use -1 (every call) or a count >= 0"},
      {{{"Operation", "AttachVolume"}, {"LatencyMs", -1}},
       "Value (-1) for parameter LatencyMs is invalid: it must be >= 0"},
  };
  for (const Bad& c : cases) {
    auto [status, body] = Call("POST", "/admin/faults", c.fault);
    EXPECT_EQ(400, status) << c.fault.dump();
    EXPECT_EQ("InvalidParameterValue", body["Error"]["Code"]) << c.fault.dump();
    EXPECT_EQ(c.message, body["Error"]["Message"]) << c.fault.dump();
  }
  EXPECT_TRUE(Call("GET", "/admin/state").second["Faults"].empty()) << "a refused fault was set";
  // The names the refusal lists are the EC2 routes, and each takes a fault.
  for (size_t pos = 0; pos < valid.size();) {
    size_t comma = valid.find(", ", pos);
    std::string op =
        valid.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? valid.size() : comma + 2;
    Fault({{"Operation", op}, {"ErrorCode", "RequestLimitExceeded"}, {"Count", 1}});
    auto [status, body] = Call("POST", "/ec2/" + op, json::object());
    EXPECT_EQ("Injected fault on " + op, body["Error"]["Message"]) << op << ": " << body.dump();
  }
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
