// convoy-fake daemon with the vfs driver, through its socket: every route
// with and without a version prefix, socket handling, bad input, hostile
// names, the PR #161 bind-mount extension, shutdown, and concurrent clients.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::testing {
namespace {

using nlohmann::json;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

class FakesDaemonApi : public ::testing::Test {
 protected:
  std::vector<std::string> Args(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {ConvoyFakeBinary(), "daemon",     "--socket",   Socket(),
                                     "--state-dir",      Path("root"), "--vfs-path", Path("vfs")};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  void Start(const std::vector<std::string>& extra = {}, int ready_deadline_ms = 10000) {
    daemon_ = std::make_unique<FakeProcess>(Args(extra), ready_deadline_ms);
  }
  void TearDown() override {
    if (daemon_ && daemon_->running()) {
      EXPECT_EQ(0, daemon_->Stop());
    }
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  std::string Socket() const { return Path("convoy.sock"); }
  RawResponse Call(const std::string& method, const std::string& target,
                   const std::optional<std::string>& body = std::nullopt,
                   const std::string& ua = "Convoy-Client/1") {
    HttpConnection c(Socket());
    return c.Request(method, target, body, ua);
  }

  flexkit::testing::TempDir dir_{"cf-api"};
  std::unique_ptr<FakeProcess> daemon_;
};

TEST_F(FakesDaemonApi, EveryRouteAnswersBareAndUnderAnyVersionPrefix) {
  Start();
  ASSERT_EQ(200, Call("POST", "/v1/volumes/create", R"({"Name":"vol1"})").status);
  struct Route {
    std::string method, path, body;
  };
  const std::vector<Route> routes = {
      {"GET", "/info", ""},
      {"GET", "/volumes/list", ""},
      {"GET", "/volumes/", R"({"VolumeName":"vol1"})"},
      {"POST", "/volumes/create", R"({"Name":"x"})"},
      {"POST", "/volumes/mount", R"({"VolumeName":"vol1"})"},
      {"POST", "/volumes/umount", R"({"VolumeName":"vol1"})"},
      {"DELETE", "/volumes/", R"({"VolumeName":"x"})"},
      {"POST", "/snapshots/create", R"({"Name":"s1","VolumeName":"vol1"})"},
      {"GET", "/snapshots/", R"({"SnapshotName":"s1"})"},
      {"DELETE", "/snapshots/", R"({"SnapshotName":"s1"})"},
      {"POST", "/backups/create", R"({"URL":"vfs:///nonexistent","SnapshotName":"nosnap"})"},
      {"GET", "/backups/list", R"({"URL":"vfs:///nonexistent"})"},
      {"GET", "/backups/inspect", R"({"URL":"vfs:///nonexistent?backup=backup-1&volume=vol1"})"},
      {"DELETE", "/backups", R"({"URL":"vfs:///nonexistent?backup=backup-1&volume=vol1"})"},
  };
  for (const std::string prefix : {"", "/v1", "/v42", "/v1.0"}) {
    for (const auto& r : routes) {
      RawResponse got =
          Call(r.method, prefix + r.path, r.body.empty() ? std::nullopt : std::optional(r.body));
      EXPECT_EQ(std::string::npos, got.body.find("Handler not found"))
          << r.method << " " << prefix << r.path;
      EXPECT_NE(404, got.status) << r.method << " " << prefix << r.path << ": " << got.body;
      RawResponse mismatch = Call(r.method, prefix + r.path, r.body, "Convoy-Client/3");
      EXPECT_EQ(404, mismatch.status);
      EXPECT_EQ("client version 3 doesn't match with server 1\n", mismatch.body);
    }
  }
}

TEST_F(FakesDaemonApi, WrongMethodOrUnknownPathIsHandlerNotFound) {
  Start();
  RawResponse r = Call("PUT", "/v1/volumes/create?x=1", "{}");
  EXPECT_EQ(404, r.status);
  EXPECT_EQ("Handler not found: PUT /v1/volumes/create?x=1", r.body);
  EXPECT_EQ("text/plain; charset=utf-8", r.Header("Content-Type").value_or(""));
  EXPECT_EQ("Handler not found: GET /v1/volumes", Call("GET", "/v1/volumes").body);
}

TEST_F(FakesDaemonApi, SocketIsOwnerOnlyByDefault) {
  Start();
  struct stat st {};
  ASSERT_EQ(0, ::stat(Socket().c_str(), &st));
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(0600u, st.st_mode & 0777);
}

TEST_F(FakesDaemonApi, SocketModeFlagIsHonoured) {
  Start({"--socket-mode", "0660"});
  struct stat st {};
  ASSERT_EQ(0, ::stat(Socket().c_str(), &st));
  EXPECT_EQ(0660u, st.st_mode & 0777);
}

TEST_F(FakesDaemonApi, StaleSocketFileIsReplaced) {
  Start();
  daemon_->Kill();  // leaves the socket file behind, nobody listening
  ASSERT_TRUE(Exists(Socket()));
  ::unlink(Path("root/lock").c_str());
  Start();
  EXPECT_EQ(200, Call("GET", "/v1/info").status);
}

TEST_F(FakesDaemonApi, LiveSocketIsRefusedWithAClearMessage) {
  Start();
  Finished second = RunConvoyFake({"daemon", "--socket", Socket(), "--state-dir", Path("other")});
  EXPECT_EQ(1, second.exit_code);
  EXPECT_NE(std::string::npos, second.err.find("a live server is answering on it")) << second.err;
  EXPECT_EQ(200, Call("GET", "/v1/info").status) << "the first daemon must keep serving";
}

TEST_F(FakesDaemonApi, SocketPathOver107BytesIsAnError) {
  std::string long_path = dir_.path() + "/" + std::string(120, 's') + ".sock";
  Finished r = RunConvoyFake({"daemon", "--socket", long_path, "--state-dir", Path("root")});
  EXPECT_EQ(1, r.exit_code);
  EXPECT_NE(std::string::npos, r.err.find("the limit is 107")) << r.err;
}

TEST_F(FakesDaemonApi, SigintAndSigtermStopCleanly) {
  for (int sig : {SIGINT, SIGTERM}) {
    Start();
    ::kill(daemon_->pid(), sig);
    EXPECT_EQ(0, daemon_->Wait()) << "exit status after signal " << sig;
    EXPECT_FALSE(Exists(Socket()));
    EXPECT_FALSE(Exists(Path("root/lock")));
  }
}

TEST_F(FakesDaemonApi, ReadyLineAndLogFileInTheStateDir) {
  Start();
  std::ifstream log(Path("root/convoy-fake-daemon.log"));
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(std::string::npos, text.str().find("ready on " + Socket()));
}

TEST_F(FakesDaemonApi, BodyOver16MiBIsRefusedUnreadAndNothingChanges) {
  Start();
  HttpConnection c(Socket());
  c.Send("POST /v1/volumes/create HTTP/1.1\r\nHost: x\r\nContent-Length: " +
         std::to_string((16 << 20) + 1) + "\r\n\r\n{\"Name\":\"huge\"");
  RawResponse r = c.Read();
  EXPECT_EQ(413, r.status);
  EXPECT_EQ("{}", Call("GET", "/v1/volumes/list").body);
  EXPECT_FALSE(Exists(Path("vfs/huge")));
}

TEST_F(FakesDaemonApi, HeaderFloodGets431AndTheServerKeepsServing) {
  Start();
  HttpConnection c(Socket());
  std::string flood = "GET /v1/info HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 30000; ++i)
    flood += "X-Flood-" + std::to_string(i) + ": " + std::string(40, 'y') + "\r\n";
  try {
    c.Send(flood + "\r\n");
  } catch (const std::exception&) {
    // The server answers and closes before reading the rest: expected.
  }
  EXPECT_EQ(431, c.Read().status);
  EXPECT_EQ(200, Call("GET", "/v1/info").status);
}

TEST_F(FakesDaemonApi, MalformedJsonChangesNothingAndServingGoesOn) {
  Start();
  for (const char* body : {"{\"Name\":", "[1,2]", "{\"Name\":5}", "\"str\""}) {
    EXPECT_EQ(400, Call("POST", "/v1/volumes/create", std::string(body)).status) << body;
  }
  EXPECT_EQ("{}", Call("GET", "/v1/volumes/list").body);
}

// Texts only a library writes (nlohmann's, the C++ library's): a reply must
// say what is wrong with the request instead.
void ExpectNoLibraryText(const std::string& what, const std::string& body) {
  for (const char* text : {"json.exception", "type_error", "parse_error", "out_of_range",
                           "basic_string", "stoi", "stoul", "what()", "filesystem error"}) {
    EXPECT_EQ(std::string::npos, body.find(text)) << what << ": " << body;
  }
}

TEST_F(FakesDaemonApi, BadRequestsGetGoDecoderTextsNamingTheFieldAndType) {
  Start();
  ASSERT_EQ(200, Call("POST", "/v1/volumes/create", R"({"Name":"vol1"})").status);
  struct Bad {
    std::string method, path, body, reply;
  };
  const std::string field = "json: cannot unmarshal ";
  const std::vector<Bad> cases = {
      {"POST", "/v1/volumes/create", R"({"Name":)", "unexpected EOF"},
      {"POST", "/v1/volumes/create", R"({"Name" "x"})", "invalid character '\"' after object key"},
      {"POST", "/v1/volumes/create", "[1]",
       field + "array into Go value of type api.VolumeCreateRequest"},
      {"POST", "/v1/volumes/create", R"({"Name":5})",
       field + "number into Go struct field VolumeCreateRequest.Name of type string"},
      {"POST", "/v1/volumes/create", R"({"Name":"v2","Size":"1G"})",
       field + "string into Go struct field VolumeCreateRequest.Size of type int64"},
      {"POST", "/v1/volumes/create", R"({"Name":"v2","Size":1e30})",
       field + "number 1e30 into Go struct field VolumeCreateRequest.Size of type int64"},
      {"POST", "/v1/volumes/create", R"({"Name":"v2","Verbose":"yes"})",
       field + "string into Go struct field VolumeCreateRequest.Verbose of type bool"},
      {"POST", "/v1/volumes/mount", R"({"VolumeName":["vol1"]})",
       field + "array into Go struct field VolumeMountRequest.VolumeName of type string"},
      {"POST", "/v1/volumes/mount", "{}", "volume  doesn't exist"},
      {"POST", "/v1/volumes/umount", R"({"VolumeName":{}})",
       field + "object into Go struct field VolumeUmountRequest.VolumeName of type string"},
      {"DELETE", "/v1/volumes/", R"({"VolumeName":"vol1","ReferenceOnly":1})",
       field + "number into Go struct field VolumeDeleteRequest.ReferenceOnly of type bool"},
      {"DELETE", "/v1/volumes/", "{}", "Volume not found."},
      {"GET", "/v1/volumes/", R"({"VolumeName":true})",
       field + "bool into Go struct field VolumeInspectRequest.VolumeName of type string"},
      {"POST", "/v1/snapshots/create", R"({"VolumeName":"vol1","Name":7})",
       field + "number into Go struct field SnapshotCreateRequest.Name of type string"},
      {"GET", "/v1/backups/inspect", R"({"URL":false})",
       field + "bool into Go struct field BackupListRequest.URL of type string"},
  };
  for (const Bad& c : cases) {
    RawResponse r = Call(c.method, c.path, c.body);
    std::string what = c.method + " " + c.path + " " + c.body;
    EXPECT_EQ(c.reply == "Volume not found." ? 404 : 400, r.status) << what << ": " << r.body;
    EXPECT_EQ(c.reply + "\n", r.body) << what;
    ExpectNoLibraryText(what, r.body);
  }
  RawResponse plugin = Call("POST", "/VolumeDriver.Create", R"({"Name":"p1","Opts":{"size":5}})");
  EXPECT_EQ(200, plugin.status);
  EXPECT_NE(
      std::string::npos,
      plugin.body.find(field + "number into Go struct field pluginRequest.Opts of type string"))
      << plugin.body;
  json listed = json::parse(Call("GET", "/v1/volumes/list").body);
  EXPECT_EQ(1u, listed.size()) << "a refused request created something: " << listed.dump();
}

TEST_F(FakesDaemonApi, ACorruptRecordIsAnErrorInTheFakesTermsNotTheLibrarys) {
  Start();
  // A vfs backup record the daemon parses when asked to inspect it.
  std::string store = Path("store");
  std::string backups = store + "/convoy-objectstore/volumes/vo/l1/vol1/backups";
  std::filesystem::create_directories(backups);
  std::ofstream(backups + "/backup_backup-1.cfg") << "{\"BackupName\": ";
  RawResponse r = Call("GET", "/v1/backups/inspect",
                       R"({"URL":"vfs://)" + store + R"(?backup=backup-1&volume=vol1"})");
  EXPECT_EQ(400, r.status) << r.body;
  EXPECT_EQ("read record " + backups + "/backup_backup-1.cfg: it is not valid JSON\n", r.body);
  ExpectNoLibraryText("corrupt backup record", r.body);
  EXPECT_EQ(200, Call("GET", "/v1/volumes/list").status) << "serving goes on";
}

TEST_F(FakesDaemonApi, NamesThatEscapeTheDaemonDirectoriesAreRefusedAndTouchNothing) {
  Start();
  for (const std::string name :
       {"../../etc", "/etc", "..", ".", "../vfs-sibling", "config", "a/../../x"}) {
    RawResponse r = Call("POST", "/v1/volumes/create", json({{"Name", name}}).dump());
    EXPECT_EQ(400, r.status) << name;
    EXPECT_EQ("Invalid name " + name + "\n", r.body);
    RawResponse plugin = Call("POST", "/VolumeDriver.Remove", json({{"Name", name}}).dump());
    EXPECT_EQ(200, plugin.status);
  }
  EXPECT_FALSE(Exists(dir_.path() + "/x"));
  EXPECT_FALSE(Exists(dir_.path() + "/vfs-sibling"));
  EXPECT_TRUE(Exists(Path("vfs/config")));
}

TEST_F(FakesDaemonApi, GeneratedNamesAreVolumeDash16Hex) {
  Start();
  std::string name = Call("POST", "/v1/volumes/create", std::string("{}")).body;
  EXPECT_TRUE(std::regex_match(name, std::regex("volume-[0-9a-f]{16}"))) << name;
}

TEST_F(FakesDaemonApi, MetadataSurvivesAKillAndARestart) {
  Start();
  ASSERT_EQ(200, Call("POST", "/v1/volumes/create", std::string(R"({"Name":"keep"})")).status);
  ASSERT_EQ(200, Call("POST", "/v1/volumes/mount", std::string(R"({"VolumeName":"keep"})")).status);
  daemon_->Kill();
  ::unlink(Path("root/lock").c_str());
  std::ifstream record(Path("vfs/config/vfs_volume_keep.json"));
  json j = json::parse(record);
  EXPECT_EQ(Path("vfs/keep"), j["MountPoint"]);
  Start();
  json info =
      json::parse(Call("GET", "/v1/volumes/", std::string(R"({"VolumeName":"keep"})")).body);
  EXPECT_EQ(Path("vfs/keep"), info["MountPoint"]);
}

TEST_F(FakesDaemonApi, ConcurrentClientsOnDistinctVolumesAllSucceed) {
  Start();
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 16; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        std::string name = "c" + std::to_string(t) + "-" + std::to_string(i);
        if (Call("POST", "/v1/volumes/create", json({{"Name", name}}).dump()).body != name)
          ++failures;
        if (Call("POST", "/v1/volumes/mount", json({{"VolumeName", name}}).dump()).status != 200)
          ++failures;
        if (Call("POST", "/v1/volumes/umount", json({{"VolumeName", name}}).dump()).status != 200)
          ++failures;
        if (i % 2 == 0 &&
            Call("DELETE", "/v1/volumes/", json({{"VolumeName", name}}).dump()).status != 200) {
          ++failures;
        }
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(80u, json::parse(Call("GET", "/v1/volumes/list").body).size());
}

// What fakes_daemon_bench times, gated here: 64 clients, each on its own
// kept-alive connection, are all answered, none refused or dropped.
TEST_F(FakesDaemonApi, SixtyFourKeptAliveClientsAreEachAnsweredEveryTime) {
  Start();
  ASSERT_EQ(200, Call("POST", "/v1/volumes/create", std::string(R"({"Name":"probe"})")).status);
  const std::string inspect = R"({"VolumeName":"probe"})";
  std::atomic<int> answered{0}, errors{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 64; ++t) {
    clients.emplace_back([&] {
      try {
        HttpConnection c(Socket());
        for (int i = 0; i < 50; ++i) {
          if (c.Request("GET", "/v1/volumes/", inspect, "Convoy-Client/1").status == 200) {
            ++answered;
          } else {
            ++errors;
          }
        }
      } catch (const std::exception&) {
        ++errors;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(0, errors.load());
  EXPECT_EQ(64 * 50, answered.load());
}

// Records other hosts wrote to the shared config directory: a list of
// 10,000 of them answers 200 with every one.
TEST_F(FakesDaemonApi, AListOfTenThousandVolumesAnswersEveryRecord) {
  std::filesystem::create_directories(Path("vfs/config"));
  for (int i = 0; i < 10000; ++i) {
    const std::string name = "many-" + std::to_string(i);
    std::filesystem::create_directory(Path("vfs/" + name));
    std::ofstream(Path("vfs/config/vfs_volume_" + name + ".json"))
        << json({{"Name", name},
                 {"Size", 0},
                 {"Path", Path("vfs/" + name)},
                 {"MountPoint", ""},
                 {"PrepareForVM", false},
                 {"CreatedTime", "Mon Nov 30 08:20:53 +0000 2026"},
                 {"Snapshots", json::object()}})
               .dump()
        << "\n";
  }
  // The daemon reads every record before it says ready: under a sanitizer on
  // a busy two-core machine that took over 10 s, so it gets a minute.
  Start({}, 60000);
  const RawResponse r = Call("GET", "/v1/volumes/list");
  ASSERT_EQ(200, r.status) << r.body.substr(0, 200);
  const json listed = json::parse(r.body);
  EXPECT_EQ(10000u, listed.size());
  EXPECT_TRUE(listed.contains("many-9999"));
}

TEST_F(FakesDaemonApi, ConcurrentCreatesOfOneNameCreateItOnce) {
  Start();
  std::atomic<int> ok{0}, exists{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&] {
      RawResponse r = Call("POST", "/v1/volumes/create", std::string(R"({"Name":"same"})"));
      if (r.status == 200) ++ok;
      if (r.body == "Volume same already exists \n") ++exists;
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(1, ok.load());
  EXPECT_EQ(7, exists.load());
}

TEST_F(FakesDaemonApi, BindMountExtensionMountsForRealReadOnlyAndRemounts) {
  if (!flexkit::testing::IsRoot()) GTEST_SKIP() << "needs root: bind mounts";
  daemon_ = std::make_unique<FakeProcess>(InPrivateMountNamespace(Args()));
  ASSERT_EQ(200, Call("POST", "/v1/volumes/create", std::string(R"({"Name":"shared"})")).status);
  std::string mp1 = Path("pods/one"), mp2 = Path("pods/two");
  RawResponse r = Call("POST", "/v1/volumes/mount",
                       json({{"VolumeName", "shared"},
                             {"MountPoint", mp1},
                             {"BindMount", "bind"},
                             {"ReadWrite", "ro"}})
                           .dump());
  ASSERT_EQ(200, r.status) << r.body;
  EXPECT_EQ(mp1, r.body);
  std::string ns = std::to_string(daemon_->pid());
  auto write = flexkit::testing::RunProcess(
      {"/usr/bin/nsenter", "--target", ns, "--mount", "/bin/sh", "-c", "echo x > " + mp1 + "/f"});
  EXPECT_NE(0, write.exit_code) << "a read-only bind mount must refuse writes";
  RawResponse refused =
      Call("POST", "/v1/volumes/mount",
           json({{"VolumeName", "shared"}, {"MountPoint", mp2}, {"BindMount", "bind"}}).dump());
  EXPECT_EQ("Volume shared was already mounted at " + mp1 + ", but asked to mount at " + mp2 + "\n",
            refused.body);
  RawResponse moved = Call("POST", "/v1/volumes/mount",
                           json({{"VolumeName", "shared"},
                                 {"MountPoint", mp2},
                                 {"BindMount", "rbind"},
                                 {"ReMount", true}})
                               .dump());
  ASSERT_EQ(200, moved.status) << moved.body;
  auto wrote =
      flexkit::testing::RunProcess({"/usr/bin/nsenter", "--target", ns, "--mount", "/bin/sh", "-c",
                                    "echo y > " + mp2 + "/f && cat " + Path("vfs/shared/f")});
  EXPECT_EQ("y\n", wrote.out);
  ASSERT_EQ(200,
            Call("POST", "/v1/volumes/umount", std::string(R"({"VolumeName":"shared"})")).status);
  std::ifstream mountinfo("/proc/" + ns + "/mountinfo");
  std::string all((std::istreambuf_iterator<char>(mountinfo)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::string::npos, all.find(Path("pods"))) << "left a mount behind";
}

}  // namespace
}  // namespace flexkit::fakes::testing
