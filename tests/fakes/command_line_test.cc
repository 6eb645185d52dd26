// convoy-fake's command line: usage errors and --version.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/fakes/fake_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

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
