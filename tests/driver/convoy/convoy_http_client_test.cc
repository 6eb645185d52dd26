#include "driver/convoy/convoy_http_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/driver/convoy/scripted_server.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using ::testing::HasSubstr;
using testing::ScriptedServer;
using ::testing::StartsWith;
using Reply = ScriptedServer::Reply;
using namespace std::chrono_literals;

// A unix socket that listens and never accepts: the daemon of a client
// test that must see no reply at all, and counts the connections made.
class SilentListener {
 public:
  explicit SilentListener(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 16) != 0) {
      throw std::runtime_error("SilentListener: cannot listen on " + path);
    }
  }
  ~SilentListener() { Close(); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  // Accepts every connection waiting in the backlog and reads what each
  // sent: one string per connection.
  std::vector<std::string> TakeRequests() {
    std::vector<std::string> requests;
    while (true) {
      int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn < 0) break;
      std::string bytes;
      char buf[4096];
      ssize_t n;
      while ((n = ::read(conn, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(n));
      ::close(conn);
      requests.push_back(bytes);
    }
    return requests;
  }

  // Resets the connections still waiting to be accepted.
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

const char* kVolumeJson =
    "{\n\t\"Name\": \"pv-1\",\n\t\"Driver\": \"ebs\",\n\t\"MountPoint\": \"\",\n\t\"CreatedTime\": "
    "\"Mon Jan 02 "
    "15:04:05 -0700 2006\",\n\t\"DriverInfo\": {\n\t\t\"Device\": \"/dev/xvdf\",\n\t\t\"Driver\": "
    "\"ebs\"\n\t},\n\t"
    "\"Snapshots\": {}\n}";

class ConvoyHttpClientTest : public ::testing::Test {
 protected:
  std::string Socket() const { return dir.Join("convoy.sock"); }
  ConvoyHttpClient Client(std::chrono::milliseconds request_timeout = 2000ms) {
    return ConvoyHttpClient(Socket(), 500ms, request_timeout);
  }
  // The JSON body of a recorded request.
  static nlohmann::json Body(const std::string& request) {
    return nlohmann::json::parse(request.substr(request.find("\r\n\r\n") + 4));
  }
  flexkit::testing::TempDir dir;
};

TEST_F(ConvoyHttpClientTest, CreateSendsConvoysFieldsAndParsesTheVerboseReply) {
  ScriptedServer server(Socket(), {Reply{ScriptedServer::Http(200, "OK", kVolumeJson)}});
  CreateRequest req;
  req.name = "pv-1";
  req.driver_name = "ebs";
  req.driver_volume_id = "vol-1";
  req.size = 1073741824;
  req.fs_type = "xfs";
  VolumeInfo v = Client().Create(req);
  EXPECT_EQ(v.Device(), "/dev/xvdf");
  const std::string raw = server.Requests().at(0);
  EXPECT_THAT(raw, StartsWith("POST /v1/volumes/create HTTP/1.1\r\n"));
  EXPECT_THAT(raw, HasSubstr("User-Agent: Convoy-Client/1\r\n"));
  auto body = Body(raw);
  EXPECT_EQ(body["Name"], "pv-1");
  EXPECT_EQ(body["DriverName"], "ebs");
  EXPECT_EQ(body["DriverVolumeID"], "vol-1");
  EXPECT_EQ(body["Size"], 1073741824);
  EXPECT_EQ(body["FSType"], "xfs");
  EXPECT_EQ(body["Verbose"], true);
}

TEST_F(ConvoyHttpClientTest, InspectSendsTheNameInAGetBody) {
  ScriptedServer server(Socket(), {Reply{ScriptedServer::Http(200, "OK", kVolumeJson)}});
  auto v = Client().Inspect("pv-1");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->name, "pv-1");
  const std::string raw = server.Requests().at(0);
  EXPECT_THAT(raw, StartsWith("GET /v1/volumes/ HTTP/1.1\r\n"));
  EXPECT_EQ(Body(raw)["VolumeName"], "pv-1");
}

TEST_F(ConvoyHttpClientTest, InspectOfAnUnknownVolumeIsNullopt) {
  ScriptedServer server(Socket(),
                        {Reply{ScriptedServer::Http(404, "Not Found", "Volume not found.\n")}});
  EXPECT_FALSE(Client().Inspect("pv-1").has_value());
}

TEST_F(ConvoyHttpClientTest, OtherNotFoundsAreErrorsNotMissingVolumes) {
  ScriptedServer server(
      Socket(),
      {Reply{ScriptedServer::Http(404, "Not Found", "Handler not found: GET /v1/volumes/\n")}});
  try {
    Client().Inspect("pv-1");
    FAIL() << "expected a ConvoyError";
  } catch (const ConvoyError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_THAT(e.what(), HasSubstr("Handler not found"));
  }
}

TEST_F(ConvoyHttpClientTest, ErrorsNameTheDaemonTheRequestAndTheAnswer) {
  ScriptedServer server(
      Socket(), {Reply{ScriptedServer::Http(400, "Bad Request", "volume pv-1 doesn't exist\n")}});
  try {
    MountRequest req;
    req.volume_name = "pv-1";
    Client().Mount(req);
    FAIL() << "expected a ConvoyError";
  } catch (const ConvoyError& e) {
    EXPECT_EQ(std::string(e.what()),
              "convoy at " + Socket() + ": POST /v1/volumes/mount: 400 volume pv-1 doesn't exist");
    EXPECT_EQ(e.status(), 400);
  }
}

TEST_F(ConvoyHttpClientTest, MountSendsTheKubernetesExtensions) {
  ScriptedServer server(Socket(), {Reply{ScriptedServer::Http(200, "OK", "/g/pv-1")}});
  MountRequest req;
  req.volume_name = "pv-1";
  req.mount_point = "/g/pv-1";
  req.read_write = "ro";
  req.bind_mount = "bind";
  req.remount = true;
  EXPECT_EQ(Client().Mount(req), "/g/pv-1");
  auto body = Body(server.Requests().at(0));
  EXPECT_EQ(body["ReadWrite"], "ro");
  EXPECT_EQ(body["BindMount"], "bind");
  EXPECT_EQ(body["ReMount"], true);
  EXPECT_EQ(body["MountPoint"], "/g/pv-1");
}

TEST_F(ConvoyHttpClientTest, DeleteIsReferenceOnlyAndToleratesNotFound) {
  ScriptedServer server(Socket(),
                        {Reply{ScriptedServer::Http(200, "OK", "")},
                         Reply{ScriptedServer::Http(404, "Not Found", "Volume not found.\n")}});
  EXPECT_TRUE(Client().Delete("pv-1", true));
  EXPECT_FALSE(Client().Delete("pv-1", true));
  const std::string raw = server.Requests().at(0);
  EXPECT_THAT(raw, StartsWith("DELETE /v1/volumes/ HTTP/1.1\r\n"));
  EXPECT_EQ(Body(raw)["ReferenceOnly"], true);
}

TEST_F(ConvoyHttpClientTest, ListParsesEveryVolume) {
  ScriptedServer server(Socket(),
                        {Reply{ScriptedServer::Http(
                            200, "OK", std::string("{\n\t\"pv-1\": ") + kVolumeJson + "\n}")}});
  auto volumes = Client().List();
  ASSERT_EQ(volumes.size(), 1u);
  EXPECT_EQ(volumes.at("pv-1").Device(), "/dev/xvdf");
}

TEST_F(ConvoyHttpClientTest, DaemonDownFailsQuickly) {
  try {
    Client().Inspect("pv-1");
    FAIL();
  } catch (const ConvoyError& e) {
    EXPECT_FALSE(e.answered());
    // Refused at once by the missing socket, not given up on after the
    // connect timeout ("no connection within 500 ms").
    EXPECT_THAT(e.what(), HasSubstr("cannot connect: No such file or directory"));
  }
}

TEST_F(ConvoyHttpClientTest, MutatingRequestsAreNeverRetried) {
  ScriptedServer server(Socket(), {Reply{"", 0ms, true}});
  CreateRequest req;
  req.name = "pv-1";
  EXPECT_THROW(Client().Create(req), ConvoyError);
  EXPECT_EQ(server.Requests().size(), 1u);
}

TEST_F(ConvoyHttpClientTest, SlowDaemonTimesOut) {
  // A daemon that takes the connection and never answers: the listener
  // never accepts, so every connection the client makes waits in its
  // backlog, where the test counts them afterwards.
  SilentListener daemon(Socket());
  auto call = std::async(std::launch::async, [&] { Client(300ms).Inspect("pv-1"); });
  // Hang guard only: a client without a working request timeout would wait
  // forever; closing the listener resets its connection so the test ends.
  if (call.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no timeout within 30 s";
    daemon.Close();
  }
  try {
    call.get();
    FAIL();
  } catch (const ConvoyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no complete reply within 300 ms"));
  }
  const std::vector<std::string> requests = daemon.TakeRequests();
  ASSERT_EQ(requests.size(), 1u) << "a timeout is not retried";
  EXPECT_THAT(requests[0], StartsWith("GET /v1/volumes/ HTTP/1.1\r\n"));
}

TEST_F(ConvoyHttpClientTest, GarbageRepliesAreErrors) {
  const std::vector<std::string> garbage = {
      "not http at all\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{\"Na",
      ScriptedServer::Http(200, "OK", "{\"Name\": 3}"), ScriptedServer::Http(200, "OK", "[]"),
      ScriptedServer::Http(200, "OK", "\x01\x02\xff")};
  for (const std::string& bytes : garbage) {
    ScriptedServer server(Socket(), {Reply{bytes}});
    EXPECT_THROW(Client(500ms).Inspect("pv-1"), ConvoyError) << bytes;
  }
}

TEST_F(ConvoyHttpClientTest, ClosedWithoutReplyIsAnError) {
  ScriptedServer server(Socket(), {Reply{"", 0ms, true}});
  try {
    Client().List();
    FAIL();
  } catch (const ConvoyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no valid HTTP reply"));
  }
}

TEST_F(ConvoyHttpClientTest, OverlongSocketPathIsRefused) {
  ConvoyHttpClient client("/" + std::string(120, 's'), 100ms, 100ms);
  try {
    client.List();
    FAIL();
  } catch (const ConvoyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("longer than 107 bytes"));
  }
}

// The probe's answers as the daemons give them: stock v0.5.2's is recorded
// (golden step mount_empty_name: the unknown ReadWrite key is ignored), an
// extended daemon's is Go's decode error for its ReadWrite string field.
TEST_F(ConvoyHttpClientTest, ProbeTellsStockFromExtendedByTheirAnswers) {
  {
    ScriptedServer stock(
        Socket(), {Reply{ScriptedServer::Http(400, "Bad Request", "volume  doesn't exist\n")}});
    ApiProbe p = Client().ProbeApi();
    EXPECT_EQ(p.kind, ApiProbe::Kind::kStock) << p.evidence;
    EXPECT_THAT(p.evidence, HasSubstr("volume  doesn't exist"));
    EXPECT_EQ(Body(stock.Requests().at(0)),
              nlohmann::json::parse(R"({"VolumeName":"","ReadWrite":0})"));
  }
  {
    ScriptedServer extended(
        Socket(), {Reply{ScriptedServer::Http(400, "Bad Request",
                                              "json: cannot unmarshal number into Go struct field "
                                              "VolumeMountRequest.ReadWrite of type string\n")}});
    EXPECT_EQ(Client().ProbeApi().kind, ApiProbe::Kind::kExtended);
  }
  {
    ScriptedServer other(Socket(), {Reply{ScriptedServer::Http(404, "Not Found", "nope")}});
    EXPECT_EQ(Client().ProbeApi().kind, ApiProbe::Kind::kUnknown);
  }
}

TEST_F(ConvoyHttpClientTest, StockRequestsCarryNoExtensionKeys) {
  ScriptedServer server(Socket(), {Reply{ScriptedServer::Http(200, "OK", "/vfs/pv-1")}});
  MountRequest req;
  req.volume_name = "pv-1";
  req.extensions = false;
  EXPECT_EQ(Client().Mount(req), "/vfs/pv-1");
  EXPECT_EQ(Body(server.Requests().at(0)),
            nlohmann::json::parse(R"({"VolumeName":"pv-1","MountPoint":"","Verbose":false})"));
}

TEST_F(ConvoyHttpClientTest, TheDaemonInstanceChangesWhenTheDaemonRestarts) {
  std::string first, second;
  {
    ScriptedServer one(Socket(), {Reply{ScriptedServer::Http(200, "OK", "")}});
    first = Client().DaemonInstance();
    EXPECT_EQ(first, Client().DaemonInstance());
  }
  ScriptedServer two(Socket(), {Reply{ScriptedServer::Http(200, "OK", "")}});
  second = Client().DaemonInstance();
  EXPECT_FALSE(first.empty());
  EXPECT_NE(first, second);
}

}  // namespace
}  // namespace convoy_flexvolume
