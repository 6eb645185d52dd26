// The runner's watchdog (case_watchdog.h): a case whose harness starts or
// ends no driver call for the stall limit is stopped, an ERROR that says
// where it waited, with its processes reclaimed, and the run goes on; a
// case that keeps calling the driver runs as long as it needs.
#include "conformance/case_watchdog.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "conformance/case_context.h"
#include "conformance/runner.h"
#include "platform/process_launch.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

using std::chrono::milliseconds;

std::string Applies(const DriverProfile&) { return ""; }

// True while the process runs. A zombie counts as gone: its parent, the worker, has exited, so
// nobody may reap it yet, but it holds nothing.
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

class RunnerStallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FLEXKIT_REQUIRE_ROOT();
    profile_ = ParseProfile(
        "driver: " + flexkit::testing::BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs") + "\n",
        dir_.Join("profile.yaml"), dir_.path());
    settings_.run_root = dir_.path();
    settings_.stall_limit = milliseconds(1500);
  }
  RunSummary Run(const std::vector<const Case*>& cases) {
    const auto start = std::chrono::steady_clock::now();
    RunSummary summary = RunCases(profile_, cases, settings_);
    wall_ = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    return summary;
  }
  flexkit::testing::TempDir dir_{"runner-stall"};
  DriverProfile profile_;
  RunSettings settings_;
  milliseconds wall_{0};
};

TEST_F(RunnerStallTest, ACaseThatStallsIsStoppedWithWhereItWaitedAndItsProcessesReclaimed) {
  const std::string pid_file = dir_.Join("sleeper.pid");
  const Case stalls{"test/stalls", {"root"}, {}, Applies, [&pid_file](CaseContext&) {
                      // A process of the case's, then a wait that never ends.
                      const platform::Launched sleeper =
                          platform::Launch({.executable = "/bin/sleep", .args = {"600"}});
                      std::ofstream(pid_file) << sleeper.pid << "\n";
                      int never[2];
                      if (::pipe(never) != 0) return;
                      char byte;
                      ssize_t ignored = ::read(never[0], &byte, 1);
                      (void)ignored;
                    }};
  const Case after{"test/after", {"root"}, {}, Applies, [](CaseContext&) {}};
  const auto summary = Run({&stalls, &after});
  ASSERT_EQ(summary.results.size(), 2u);
  const CaseResult& stalled = summary.results[0];
  EXPECT_EQ(stalled.grade, Grade::kError);
  EXPECT_NE(stalled.reason.find("flexconform's harness stalled"), std::string::npos)
      << stalled.reason;
  EXPECT_NE(stalled.reason.find("no driver call started or ended for"), std::string::npos)
      << stalled.reason;
  EXPECT_NE(stalled.reason.find("the last mark: no driver call yet"), std::string::npos)
      << stalled.reason;
  EXPECT_NE(stalled.reason.find("(read)"), std::string::npos)
      << "the thread's system call is named: " << stalled.reason;
  EXPECT_NE(stalled.reason.find("sleep 600"), std::string::npos)
      << "the case's process is named: " << stalled.reason;
  EXPECT_NE(stalled.reason.find("(reclaimed)"), std::string::npos) << stalled.reason;
  pid_t sleeper = 0;
  std::ifstream(pid_file) >> sleeper;
  ASSERT_GT(sleeper, 0);
  EXPECT_FALSE(Alive(sleeper)) << "the case's process " << sleeper << " is gone";
  EXPECT_EQ(summary.results[1].grade, Grade::kPass) << "the run went on";
  EXPECT_LT(wall_.count(), 15000) << "stopped soon after the limit";
  EXPECT_EQ(summary.ExitCode(), 2) << "a harness ERROR";
}

TEST_F(RunnerStallTest, ACaseThatKeepsCallingTheDriverRunsPastTheLimit) {
  // No wait after the last call: the case's teardown (its audit, its
  // nodes, its dir) has the whole limit, which a loaded disk can need.
  const Case calls{"test/calls", {"root"}, {}, Applies, [](CaseContext& c) {
                     for (int i = 0; i < 5; ++i) {
                       if (i > 0) std::this_thread::sleep_for(milliseconds(700));
                       c.ops().CallInit(c.node(), sim::Component::kKubelet,
                                        c.profile().driver_name);
                     }
                   }};
  const auto summary = Run({&calls});
  ASSERT_EQ(summary.results.size(), 1u);
  EXPECT_EQ(summary.results[0].grade, Grade::kPass) << summary.results[0].reason;
  EXPECT_GT(wall_.count(), 2800) << "longer than the 1.5 s limit in all";
}

TEST(StallLimit, IsTheLongestCallDeadlineACommandHookAndAMinute) {
  DriverProfile p;
  EXPECT_EQ(StallLimit(p), std::chrono::seconds(90)) << "30 s calls, no fixture";
  p.verb_timeouts["mountdevice"] = std::chrono::minutes(2);
  EXPECT_EQ(StallLimit(p), std::chrono::minutes(3));
  p.fixture.kind = "command";
  p.fixture.hook_timeout = std::chrono::seconds(45);
  EXPECT_EQ(StallLimit(p), std::chrono::seconds(225));
}

// The watchdog's judgement on virtual time: the clock is an argument.
TEST(StallOf, CountsFromTheLastMarkOrWithNoneFromTheStart) {
  const std::chrono::system_clock::time_point start{std::chrono::hours(1000)};
  const auto limit = std::chrono::seconds(90);
  EXPECT_EQ(StallOf(std::nullopt, start, start + std::chrono::seconds(89), limit), "");
  EXPECT_EQ(StallOf(std::nullopt, start, start + std::chrono::seconds(90), limit),
            "no driver call started or ended for 90 s (the last mark: none)");
  const Progress mark{start + std::chrono::seconds(60), "call 3 (mount) started"};
  EXPECT_EQ(StallOf(mark, start, start + std::chrono::seconds(149), limit), "")
      << "a mark restarts the count";
  EXPECT_EQ(StallOf(mark, start, start + std::chrono::seconds(200), limit),
            "no driver call started or ended for 140 s (the last mark: call 3 (mount) started)");
}

}  // namespace
}  // namespace flexkit::conform
