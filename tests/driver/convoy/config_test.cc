#include "driver/convoy/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using ::testing::HasSubstr;

TEST(Config, MissingFileMeansDefaults) {
  const Config c = LoadConfig("/nonexistent/config.json");
  EXPECT_EQ(c.socket, "/var/run/convoy/convoy.sock");
  EXPECT_EQ(c.mode, Mode::kAttach);
  EXPECT_EQ(c.api, Api::kAuto);
  EXPECT_LT(c.timeouts.wait_for_attach, std::chrono::minutes(10));
}

TEST(Config, AMissingFileTheVariableNamedIsAnError) {
  try {
    LoadConfig("/nonexistent/config.json", /*named=*/true);
    FAIL() << "a named file that is not there gave the defaults";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("config file /nonexistent/config.json (named by "
                                    "CONVOY_FLEXVOLUME_CONFIG) does not exist"));
  }
}

TEST(Config, ParsesEveryKey) {
  const Config c = ParseConfig(R"({"socket":"/s.sock","nodeSockets":{"n1":"/n1.sock"},
      "socketTemplate":"/run/{node}.sock","mode":"mount",
      "timeouts":{"connect":"250ms","request":"3s","waitforattach":"2m"},
      "logFile":"/var/log/c.log","stateDir":"/var/lib/c","api":"stock"})",
                               "cfg");
  EXPECT_EQ(c.socket, "/s.sock");
  EXPECT_EQ(c.mode, Mode::kMountOnly);
  EXPECT_EQ(c.timeouts.connect, std::chrono::milliseconds(250));
  EXPECT_EQ(c.timeouts.request, std::chrono::seconds(3));
  EXPECT_EQ(c.timeouts.wait_for_attach, std::chrono::minutes(2));
  EXPECT_EQ(c.log_file, "/var/log/c.log");
  EXPECT_EQ(c.state_dir, "/var/lib/c");
  EXPECT_EQ(c.api, Api::kStock);
  EXPECT_EQ(c.SocketForNode("n1"), "/n1.sock");
  EXPECT_EQ(c.SocketForNode("node-2.example"), "/run/node-2.example.sock");
}

TEST(Config, TemplateRefusesANodeNameThatIsNotADnsSubdomain) {
  Config c;
  c.socket_template = "/run/{node}.sock";
  try {
    c.SocketForNode("../etc");
    FAIL() << "no error for ../etc";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("node name \"../etc\" cannot be used in socketTemplate"));
  }
}

TEST(Config, WithoutTemplateOtherNodesUseTheLocalSocket) {
  Config c;
  EXPECT_EQ(c.SocketForNode("any"), c.socket);
}

struct BadConfig {
  const char* text;
  const char* expected;
};

TEST(Config, InvalidConfigNamesTheFileAndTheProblem) {
  const BadConfig cases[] = {
      {"{", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"sockt":"/x"})", "unknown key \"sockt\""},
      {R"({"socket":3})", "\"socket\" must be a string"},
      {R"({"socket":"relative.sock"})", "must be an absolute path"},
      {R"({"mode":"both"})", "\"mode\" must be \"attach\" or \"mount\""},
      {R"({"timeouts":{"connect":"5"}})", "positive duration"},
      {R"({"timeouts":{"connect":"0s"}})", "positive duration"},
      {R"({"timeouts":{"hang":"5s"}})", "unknown key \"timeouts.hang\""},
      {R"({"timeouts":{"waitforattach":"10m"}})", "under kubelet's 10m"},
      {R"({"socketTemplate":"/run/convoy.sock"})", "must contain {node}"},
      {R"({"nodeSockets":{"a":1}})", "nodeSockets.a"},
      {R"({"api":"v0.5.2"})", "\"api\" must be \"auto\", \"stock\" or \"extended\""},
  };
  for (const auto& c : cases) {
    try {
      ParseConfig(c.text, "/etc/convoy-flexvolume/config.json");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("invalid config /etc/convoy-flexvolume/config.json"));
      EXPECT_THAT(e.what(), HasSubstr(c.expected));
    }
  }
}

TEST(Config, UnreadableFileIsAnError) {
  flexkit::testing::TempDir dir;  // a directory cannot be read as a file
  try {
    LoadConfig(dir.path());
    FAIL() << "a directory loaded as a config";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read config " + dir.path() + ": "));
  }
}

}  // namespace
}  // namespace convoy_flexvolume
