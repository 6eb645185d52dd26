// convoy-flexvolume as an operator meets it: the config it is pointed at,
// `install` without its value, and the defaults that README and --help give.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/convoy/config.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Binary() { return flexkit::testing::BuiltBinary("driver/convoy-flexvolume"); }

flexkit::testing::ProcessResult InitWithConfig(const std::string& path) {
  flexkit::testing::RunOptions options;
  options.extra_env["CONVOY_FLEXVOLUME_CONFIG"] = path;
  return flexkit::testing::RunProcess({Binary(), "init"}, options);
}

TEST(CommandLine, AConfigTheVariableNamesMustExist) {
  flexkit::testing::TempDir dir;
  const auto r = InitWithConfig(dir.Join("typo.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\"status\":\"Failure\""));
  EXPECT_THAT(r.out, HasSubstr("config file " + dir.Join("typo.json") +
                               " (named by CONVOY_FLEXVOLUME_CONFIG) does not exist"));
  EXPECT_EQ(r.err, "");
}

TEST(CommandLine, BadJsonSaysWhereAndWhatInItsOwnWords) {
  flexkit::testing::TempDir dir;
  std::ofstream(dir.Join("c.json")) << "{\n  \"socket\": \"/run/c.sock\",\n  mode: \"attach\"\n}\n";
  const auto r = InitWithConfig(dir.Join("c.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const std::string message = nlohmann::json::parse(r.out).value("message", "");
  EXPECT_THAT(message,
              HasSubstr("invalid config " + dir.Join("c.json") + ":3:3: not valid JSON: "));
  EXPECT_THAT(message, HasSubstr("object key"));  // what the parser wanted there
  EXPECT_THAT(message, Not(HasSubstr("json.exception")));
  EXPECT_THAT(message, Not(HasSubstr("parse_error")));
}

TEST(CommandLine, InstallPluginDirWithoutAValueIsAShortError) {
  const auto r = flexkit::testing::RunProcess({Binary(), "install", "--plugin-dir"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--plugin-dir needs a value"));
  EXPECT_THAT(r.err, Not(HasSubstr("Volume options"))) << "not the whole help";
  EXPECT_LT(std::count(r.err.begin(), r.err.end(), '\n'), 4) << r.err;
  const auto other = flexkit::testing::RunProcess({Binary(), "install", "--plugindir", "/x"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_THAT(other.err, HasSubstr("unexpected argument \"--plugindir\""));
  EXPECT_THAT(other.err, Not(HasSubstr("Volume options")));
}

// README's config block shows the defaults (the two node-socket keys are
// examples); it, --help and the code must agree, the log file above all.
TEST(CommandLine, ReadmeAndHelpGiveTheDefaults) {
  std::ifstream in(FLEXKIT_README);
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t intro = readme.find("no file at the default path means the defaults shown");
  ASSERT_NE(intro, std::string::npos) << "README's config section moved";
  const size_t open = readme.find("```json\n", intro);
  const size_t close = readme.find("```", open + 8);
  ASSERT_NE(close, std::string::npos);
  const Config shown = ParseConfig(readme.substr(open + 8, close - open - 8), "README.md");
  const Config defaults;
  EXPECT_EQ(shown.socket, defaults.socket);
  EXPECT_EQ(shown.mode, defaults.mode);
  EXPECT_EQ(shown.timeouts.connect, defaults.timeouts.connect);
  EXPECT_EQ(shown.timeouts.request, defaults.timeouts.request);
  EXPECT_EQ(shown.timeouts.wait_for_attach, defaults.timeouts.wait_for_attach);
  EXPECT_EQ(shown.log_file, defaults.log_file);
  EXPECT_EQ(shown.state_dir, defaults.state_dir);
  EXPECT_EQ(shown.api, defaults.api);

  const auto help = flexkit::testing::RunProcess({Binary(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(defaults.log_file, "");
  EXPECT_THAT(help.out, HasSubstr("logFile         (empty: syslog)"));
  EXPECT_THAT(help.out, HasSubstr("socket          " + defaults.socket));
  EXPECT_THAT(help.out, HasSubstr("stateDir        " + defaults.state_dir));
}

}  // namespace
}  // namespace convoy_flexvolume
