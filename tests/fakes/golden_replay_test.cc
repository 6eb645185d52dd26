// Replays the exchanges recorded from the real Convoy v0.5.2 daemon
// (tests/data/fakes/convoy-v0.5.2, see its README) against convoy-fake and
// requires the same status line, Content-Type (or its absence) and body,
// except what the README lists as varying: dates, generated names, and the
// order of VolumeDriver.List.
//
// The recording is a selection: steps it left out changed state (volumes
// created, mounted, backed up). golden_gaps.json replays those state
// changes at their place, so every recorded exchange sees the state it saw.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::testing {
namespace {

using nlohmann::json;

std::string DataFile(const std::string& name) {
  return std::string(FLEXKIT_SOURCE_DIR) + "/tests/data/fakes/" + name;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

std::string Normalize(const std::string& body) {
  static const std::regex date(
      R"([A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} [+-]\d{4} \d{4})");
  static const std::regex generated(R"((volume|snapshot|backup)-[0-9a-f]{16})");
  return std::regex_replace(std::regex_replace(body, date, "<date>"), generated, "$1-<id>");
}

// VolumeDriver.List follows Go map order: compare its entries as a set.
std::string NormalizePluginList(const std::string& body) {
  json j = json::parse(Normalize(body));
  if (!j.contains("Volumes")) return j.dump();
  std::vector<std::string> entries;
  for (auto& v : j["Volumes"]) entries.push_back(v.dump());
  std::sort(entries.begin(), entries.end());
  return json(entries).dump();
}

// Where two bodies first differ, with some context, for a readable failure.
std::string FirstDifference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  size_t from = i > 80 ? i - 80 : 0;
  return "at byte " + std::to_string(i) + "\n  want: " + json(want.substr(from, 240)).dump() +
         "\n  got:  " + json(got.substr(from, 240)).dump();
}

std::vector<std::string> GeneratedNames(const std::string& body) {
  static const std::regex generated(R"((volume|snapshot|backup)-[0-9a-f]{16})");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), generated);
       it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

// The recording is of stock v0.5.2 and sends no extension field, so both
// personalities of convoy-fake must reproduce it: `--api stock` (v0.5.2 as
// released) and the default `--api extended` (v0.5.2 plus the extensions).
class FakesGoldenReplay : public ::testing::TestWithParam<std::string> {
 protected:
  // {base} and the recording's generated names (mapped to ours as responses
  // reveal them) replaced by this run's.
  std::string Sub(const std::string& s) const {
    std::string out = Replace(s, "{base}", base_.path());
    for (const auto& [recorded, ours] : names_) out = Replace(out, recorded, ours);
    return out;
  }

  void LearnNames(const std::string& want, const std::string& got) {
    auto recorded = GeneratedNames(want), ours = GeneratedNames(got);
    for (size_t i = 0; i < recorded.size() && i < ours.size(); ++i)
      names_.emplace(recorded[i], ours[i]);
  }

  std::map<std::string, std::string> names_;

  std::vector<std::string> DaemonArgs(const std::string& instance) const {
    std::string dir = instance == "B" ? "/b" : instance == "C" ? "/c" : "";
    std::vector<std::string> args = {
        ConvoyFakeBinary(),
        "daemon",
        "--socket",
        base_.path() + dir + "/convoy.sock",
        "--state-dir",
        base_.path() + dir + "/root",
        "--drivers",
        "vfs",
        "--vfs-path",
        base_.path() + dir + (instance == "A2" ? "/vfs-other" : "/vfs"),
        "--api",
        GetParam()};
    if (instance == "A2") args.push_back("--create-on-docker-mount");
    if (instance == "C") {
      args.push_back("--create-on-docker-mount");
      args.push_back("--ignore-docker-delete");
    }
    return args;
  }

  std::string SocketOf(const std::string& instance) const {
    std::string dir = instance == "B" ? "/b" : instance == "C" ? "/c" : "";
    return base_.path() + dir + "/convoy.sock";
  }

  std::string RequestBytes(const json& line) const {
    if (line.contains("raw_request") && !line["raw_request"].is_null()) {
      return Sub(line["raw_request"].get<std::string>());
    }
    std::string body;
    bool has_body = !line["body"].is_null();
    if (has_body) body = Sub(line["body"].get<std::string>());
    std::string req = line["method"].get<std::string>() + " " +
                      Sub(line["path"].get<std::string>()) + " HTTP/1.1\r\n";
    for (auto& [k, v] : line["headers"].items()) {
      std::string value = v.get<std::string>();
      static const std::regex summarized(R"(<(\d+) bytes of '(.)'>)");
      std::smatch m;
      if (std::regex_match(value, m, summarized))
        value = std::string(std::stoul(m[1]), m[2].str()[0]);
      if (k == "Content-Length") value = std::to_string(body.size());
      req += k + ": " + Sub(value) + "\r\n";
    }
    return req + "\r\n" + body;
  }

  flexkit::testing::TempDir base_{"cf-golden"};
};

TEST_P(FakesGoldenReplay, EveryRecordedExchangeIsReproduced) {
  std::map<int, std::vector<json>> gaps;
  for (auto& g : json::parse(std::ifstream(DataFile("golden_gaps.json")))) {
    gaps[g["before"].get<int>()].push_back(g);
  }
  std::ifstream transcript(DataFile("convoy-v0.5.2/transcript.jsonl"));
  std::unique_ptr<FakeProcess> daemon;
  std::string instance;
  int exchanges = 0;
  for (std::string text; std::getline(transcript, text);) {
    json line = json::parse(text);
    int seq = line["seq"].get<int>();
    std::string step = line["step"].get<std::string>();
    // Gaps due before this line (their own seq may be absent from the file).
    std::vector<json> due;
    while (!gaps.empty() && gaps.begin()->first <= seq) {
      for (auto& g : gaps.begin()->second) due.push_back(g);
      gaps.erase(gaps.begin());
    }
    for (auto& g : due) {
      HttpConnection c(SocketOf(instance));
      auto body = g["body"].is_null() ? std::nullopt : std::optional<std::string>(Sub(g["body"]));
      RawResponse r = c.Request(g["method"], Sub(g["path"]), body);
      ASSERT_EQ(200, r.status) << "gap request before seq " << seq << ": " << r.body;
    }
    if (line["kind"] == "event") {
      if (step == "daemon_start" || step == "daemon_restart") {
        instance = line["instance"].get<std::string>();
        daemon = std::make_unique<FakeProcess>(InPrivateMountNamespace(DaemonArgs(instance)));
      } else if (step == "daemon_stop") {
        ASSERT_EQ(0, daemon->Stop()) << "daemon of instance " << instance;
        struct stat st {};
        EXPECT_NE(0, ::stat(SocketOf(instance).c_str(), &st)) << "socket left after stop";
      } else if (step == "mkdir_backupstore") {
        ASSERT_EQ(0, ::mkdir((base_.path() + "/backupstore").c_str(), 0700));
      } else if (step == "second_daemon_same_root") {
        auto args = DaemonArgs("A2");
        args.erase(args.begin());
        args[2] = base_.path() + "/second.sock";
        Finished second = RunConvoyFake(args);
        EXPECT_EQ(1, second.exit_code);
        EXPECT_EQ("{\n\t\"Error\": \"Failed to lock the file at " + base_.path() +
                      "/root/lock: resource temporarily unavailable\"\n}\n",
                  second.out);
      }
      continue;
    }
    ++exchanges;
    SCOPED_TRACE("seq " + std::to_string(seq) + " " + step);
    HttpConnection c(SocketOf(instance));
    c.Send(RequestBytes(line));
    RawResponse got = c.Read(line["method"] == "HEAD");
    EXPECT_EQ(line["status_line"].get<std::string>(), got.status_line);
    auto want_type = line["resp_headers"].contains("Content-Type")
                         ? std::optional<std::string>(line["resp_headers"]["Content-Type"])
                         : std::nullopt;
    EXPECT_EQ(want_type, got.Header("Content-Type"));
    bool as_set = step.find("plugin_list") != std::string::npos;
    if (!as_set) LearnNames(line["resp_body"].get<std::string>(), got.body);
    std::string want_body = Sub(line["resp_body"].get<std::string>());
    std::string want = as_set ? NormalizePluginList(want_body) : Normalize(want_body);
    std::string have = as_set ? NormalizePluginList(got.body) : Normalize(got.body);
    EXPECT_TRUE(want == have) << "body differs " << FirstDifference(want, have);
  }
  EXPECT_GT(exchanges, 150);
}

INSTANTIATE_TEST_SUITE_P(Api, FakesGoldenReplay, ::testing::Values("stock", "extended"),
                         [](const auto& p) { return p.param; });

// What the recording cannot show because it sends no extension key, from
// convoy-api.md §1.4/§2.3 (unknown keys are ignored; vfs refuses any caller
// mount point): the same requests, with the extension keys, answered by
// stock and by extended. The stock texts are the recorded ones
// (mount_caller_mountpoint_vfs, mount_empty_name, create_plain, mount_vol1).
class FakesStockVersusExtended : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<FakeProcess>(InPrivateMountNamespace(
        {ConvoyFakeBinary(), "daemon", "--socket", Socket(), "--state-dir", base_.path() + "/root",
         "--drivers", "vfs", "--vfs-path", base_.path() + "/vfs", "--api", GetParam()}));
  }
  std::string Socket() const { return base_.path() + "/convoy.sock"; }
  RawResponse Post(const std::string& path, const json& body) {
    HttpConnection c(Socket());
    return c.Request("POST", path, body.dump());
  }
  bool stock() const { return GetParam() == "stock"; }
  flexkit::testing::TempDir base_{"cf-api"};
  std::unique_ptr<FakeProcess> daemon_;
};

TEST_P(FakesStockVersusExtended, ExtensionKeysAreIgnoredByStockOnly) {
  RawResponse created = Post("/v1/volumes/create", {{"Name", "vol1"}, {"FSType", "xfs"}});
  EXPECT_EQ(200, created.status) << created.body;
  EXPECT_EQ("vol1", created.body);

  // The probe the driver's `api: auto` sends.
  RawResponse probe = Post("/v1/volumes/mount", {{"VolumeName", ""}, {"ReadWrite", 0}});
  EXPECT_EQ(400, probe.status);
  EXPECT_EQ(stock() ? "volume  doesn't exist\n"
                    : "json: cannot unmarshal number into Go struct field "
                      "VolumeMountRequest.ReadWrite of type string\n",
            probe.body);

  // A caller's mount point with BindMount: stock refuses it as recorded.
  const std::string target = base_.path() + "/mnt";
  RawResponse bind = Post("/v1/volumes/mount", {{"VolumeName", "vol1"},
                                                {"MountPoint", target},
                                                {"BindMount", "bind"},
                                                {"ReadWrite", "ro"},
                                                {"ReMount", true}});
  if (stock()) {
    EXPECT_EQ(400, bind.status);
    EXPECT_EQ("VFS doesn't support specified mount point\n", bind.body);
  } else if (flexkit::testing::IsRoot()) {
    EXPECT_EQ(200, bind.status) << bind.body;
    EXPECT_EQ(target, bind.body);
    EXPECT_EQ(200, Post("/v1/volumes/umount", {{"VolumeName", "vol1"}}).status);
  }

  // ReadWrite ro without a mount point: stock's plain v0.5.2 mount.
  if (stock()) {
    RawResponse ro = Post("/v1/volumes/mount", {{"VolumeName", "vol1"}, {"ReadWrite", "ro"}});
    EXPECT_EQ(200, ro.status);
    EXPECT_EQ(base_.path() + "/vfs/vol1", ro.body);
  }
}

INSTANTIATE_TEST_SUITE_P(Api, FakesStockVersusExtended, ::testing::Values("stock", "extended"),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace flexkit::fakes::testing
