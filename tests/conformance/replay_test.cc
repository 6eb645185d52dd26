// flexsim record -> flexsim check-shapes -> flexconform --replay, end to end:
// a recording made here, with the shim installed in place of a driver and
// flexsim's own kubelet and controller making the calls, has flexsim's
// shapes, keeps the scenario's secret out of the log, replays against the
// same driver with no difference, and against another driver with the
// differences named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using flexkit::testing::BuiltBinary;
using flexkit::testing::ProcessResult;
using flexkit::testing::RunProcess;
using ::testing::HasSubstr;
using ::testing::Not;

class RecordAndReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    FLEXKIT_REQUIRE_ROOT();
    const std::string source = FLEXKIT_SOURCE_DIR;
    driver_ = source + "/tests/data/drivers/k8s~dummy-attachable/dummy-attachable";
    scenario_ = source + "/tests/data/scenarios/read_only_and_secrets.yaml";
    const std::string plugins = dir_.Join("plugins");
    fs::create_directories(plugins + "/k8s~dummy-attachable");
    fs::copy_file(driver_, plugins + "/k8s~dummy-attachable/dummy-attachable");
    auto install =
        RunProcess({BuiltBinary("simulator/flexsim"), "record", "install", "--plugin-dir", plugins,
                    "--driver", "k8s~dummy-attachable", "--log", Log()});
    ASSERT_EQ(install.exit_code, 0) << install.err;
    // flexsim run installs one executable per node; this one runs the
    // recording install, so the calls pass through the shim.
    const std::string wrapper_dir = dir_.Join("wrapper/k8s~dummy-attachable");
    fs::create_directories(wrapper_dir);
    wrapper_ = wrapper_dir + "/dummy-attachable";
    std::ofstream(wrapper_) << "#!/bin/sh\nexec " << plugins
                            << "/k8s~dummy-attachable/dummy-attachable \"$@\"\n";
    ::chmod(wrapper_.c_str(), 0755);
    auto run = RunProcess(
        {BuiltBinary("simulator/flexsim"), "run", scenario_, "--driver", wrapper_, "--quiet"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  }
  std::string Log() { return dir_.Join("calls.jsonl"); }
  ProcessResult Replay(const std::string& driver) {
    return RunProcess({BuiltBinary("conformance/flexconform"), "--replay", Log(), "--driver",
                       driver, "--run-root", dir_.path()});
  }
  flexkit::testing::TempDir dir_{"flexconform-replay"};
  std::string driver_, scenario_, wrapper_;
};

TEST_F(RecordAndReplay, TheRecordingHasFlexsimsShapesAndNoSecret) {
  std::ifstream in(Log());
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_THAT(log.str(), HasSubstr("\"verb\":\"mountdevice\""));
  EXPECT_THAT(log.str(), Not(HasSubstr("s3cr3t-value")));
  EXPECT_THAT(log.str(), Not(HasSubstr("czNjcjN0LXZhbHVl")));  // its base64
  auto r = RunProcess({BuiltBinary("simulator/flexsim"), "check-shapes", Log()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(" 0 fidelity gaps"));
}

TEST_F(RecordAndReplay, ReplayAgainstTheSameDriverHasNoDifference) {
  auto r = Replay(driver_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(", 0 differences"));
}

TEST_F(RecordAndReplay, ReplayAgainstAnotherDriverNamesTheDifference) {
  auto r = Replay(BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("attach: recorded success, replayed not_supported"));
}

}  // namespace
