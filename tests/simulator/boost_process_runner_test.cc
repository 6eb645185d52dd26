// The real ProcessRunner against real shell drivers: kubelet's exec
// environment, the timers, and what the harness detects.
#include "simulator/boost_process_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/simulator/test_paths.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

using sim::testing::TestDriver;

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0; }

// A driver and its descendants, marked through their environment so the
// test can find every one of them whenever it looks.
struct MarkedDriver {
  flexkit::testing::TempDir dir{"flexsim-runner"};
  std::string entry = "FLEXSIM_RUNNER_TEST=" + dir.path();
  void Mark(ProcessSpec& spec) const { spec.env_overrides["FLEXSIM_RUNNER_TEST"] = dir.path(); }
  std::vector<pid_t> Live() const { return flexkit::testing::LiveProcessesCarrying(entry); }
  // SIGKILL lands asynchronously: waits (10 s at most) for the marked
  // processes to be gone, and returns those that are not.
  std::vector<pid_t> GoneOrLeft() const {
    std::vector<pid_t> left = Live();
    for (int i = 0; i < 1000 && !left.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      left = Live();
    }
    return left;
  }
};

// Runs `spec`. Hang guard only, never the assertion: when the runner has
// not returned after 30 s, its driver is killed so the test can end.
ProcessResult RunGuarded(const ProcessSpec& spec, const MarkedDriver& driver) {
  auto run = std::async(std::launch::async, [&] { return BoostProcessRunner().Run(spec); });
  if (run.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "hang guard: the runner did not return within 30 s";
    for (pid_t p : driver.Live()) ::kill(p, SIGKILL);
  }
  return run.get();
}

// test~slow-attach, written here so it says when its TERM disposition is
// set: it writes $READY right after its trap.
std::string WriteSlowAttach(const flexkit::testing::TempDir& dir, const std::string& trap) {
  const std::string path = dir.Join("slow-attach");
  std::ofstream(path) << "#!/bin/sh\n"
                      << trap << "\n"
                      << ": > \"$READY\"\n"
                         "while :; do sleep 0.05; done\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// Kubelet's timer starts when the runner launches the driver, and nothing
// in BoostProcessRunner lets a test hold it until the driver is ready: a
// TERM that lands before the driver's trap kills it with the shell's
// default action, a run that proves nothing about the runner. Such a run
// (no READY file) is repeated with the timer doubled; a run in which the
// driver was ready is returned and judged. `harness_after_term` keeps the
// harness deadline that far after kubelet's timer.
ProcessResult RunOnceReadyForTerm(ProcessSpec spec, const flexkit::testing::TempDir& dir,
                                  std::optional<Millis> harness_after_term = std::nullopt) {
  const std::string ready = dir.Join("ready");
  spec.env_overrides["READY"] = ready;
  for (int attempt = 1;; ++attempt) {
    if (harness_after_term) spec.harness_deadline = spec.kubelet_timeout + *harness_after_term;
    std::filesystem::remove(ready);
    ProcessResult r = BoostProcessRunner().Run(spec);
    if (std::filesystem::exists(ready)) return r;
    if (attempt == 5) {
      ADD_FAILURE() << "the driver never set its trap before kubelet's TERM, the last time "
                    << spec.kubelet_timeout.count() << " ms after its start";
      return r;
    }
    spec.kubelet_timeout *= 2;
  }
}

TEST(SimulatorProcessRunner, PassesArgvEnvOverridesCwdAndStdinFromDevNull) {
  flexkit::testing::TempDir dir("flexsim-runner");
  ProcessSpec spec;
  spec.executable = TestDriver("test~inspect");
  spec.args = {"mount", "", "a b"};
  spec.env_overrides = {{"INSPECT_DIR", dir.path()}, {"INSPECT_VALUE", "v=1 2"}};
  ProcessResult r = BoostProcessRunner().Run(spec);
  ASSERT_TRUE(r.exit.ok()) << r.combined;
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("argv")),
            spec.executable + std::string("\0mount\0\0a b\0", 12));
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("cwd")),
            std::filesystem::current_path().string() + "\n");
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("stdin")), "/dev/null\n");
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("env")), "v=1 2");
}

TEST(SimulatorProcessRunner, LeaksNoDescriptorIntoTheDriver) {
  flexkit::testing::TempDir dir("flexsim-runner");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // deliberately without O_CLOEXEC
  std::string inode = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fds[0]));
  ProcessSpec spec;
  spec.executable = TestDriver("test~inspect");
  spec.args = {"init"};
  spec.env_overrides = {{"INSPECT_DIR", dir.path()}};
  ProcessResult r = BoostProcessRunner().Run(spec);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_TRUE(r.exit.ok());
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("fds")).find(inode), std::string::npos)
      << flexkit::testing::ReadFileText(dir.Join("fds"));
}

// kubelet's drivers start with no signal blocked; a harness that blocks
// SIGINT/SIGTERM for itself must not pass that on (a driver could never
// see the waitforattach timer's SIGTERM).
TEST(SimulatorProcessRunner, DriverStartsWithNoSignalBlocked) {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0);
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  // `read` is a builtin: the shell's own mask, not a child's, is read.
  spec.args = {"-c",
               "while read -r k v; do [ \"$k\" = SigBlk: ] && printf %s \"$v\"; done "
               "< /proc/$$/status; true"};
  ProcessResult r = BoostProcessRunner().Run(spec);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ASSERT_TRUE(r.exit.ok()) << r.combined;
  EXPECT_EQ(r.combined, "0000000000000000");
}

// os/exec CombinedOutput gives fd 1 and fd 2 one pipe: a reply written to
// both in alternation is read whole, in write order.
TEST(SimulatorProcessRunner, StdoutAndStderrAreOnePipeInWriteOrder) {
  ProcessSpec spec;
  spec.executable = TestDriver("test~alternating");
  spec.args = {"init"};
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_EQ(r.combined, "{\"status\":\"Success\",\"message\":\"from both streams\"}\n");
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].stream, Stream::kCombined);
  Verdict v = Judge("init", r.exit, r.combined);
  EXPECT_EQ(v.outcome, Outcome::kSuccess) << v.error;
  EXPECT_EQ(v.status->message, "from both streams");
}

TEST(SimulatorProcessRunner, LogLineOnStderrIsInTheSameBuffer) {
  ProcessSpec spec;
  spec.executable = TestDriver("test~logs-stderr");
  spec.args = {"init"};
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_EQ(r.combined,
            "I0101 00:00:00 init starting\n"
            "{\"status\":\"Success\",\"capabilities\":{\"attach\":false}}\n");
}

TEST(SimulatorProcessRunner, HarnessDeadlineKillsTheWholeGroup) {
  MarkedDriver driver;
  ProcessSpec spec;
  spec.executable = TestDriver("test~hangs");
  spec.args = {"mount"};
  spec.harness_deadline = Millis(300);
  driver.Mark(spec);
  ProcessResult r = RunGuarded(spec, driver);
  EXPECT_TRUE(r.harness_deadline_hit);
  EXPECT_EQ(r.exit.signal, SIGKILL);
  // The driver's `sleep` children went with it.
  EXPECT_EQ(driver.GoneOrLeft(), std::vector<pid_t>{});
}

TEST(SimulatorProcessRunner, DescendantHoldingTheOutputPipeIsDetected) {
  MarkedDriver driver;
  ProcessSpec spec;
  spec.executable = TestDriver("test~holds-stdout");
  spec.args = {"init"};
  driver.Mark(spec);
  ProcessResult r = RunGuarded(spec, driver);
  EXPECT_TRUE(r.output_held_open);
  EXPECT_TRUE(r.exit.ok());
  EXPECT_EQ(r.combined, "{\"status\":\"Success\"}\n");
  // The runner did not wait for the holder's `sleep 300`: it killed it.
  EXPECT_EQ(driver.GoneOrLeft(), std::vector<pid_t>{});
}

// k8s.io/utils exec cmdWrapper.Stop: SIGTERM; the later SIGKILL needs a
// non-nil ProcessState, so it never reaches a driver still running.
TEST(SimulatorProcessRunner, WaitForAttachTimerSendsTermAndNeverKill) {
  flexkit::testing::TempDir dir("flexsim-runner");
  ProcessSpec spec;
  spec.executable = WriteSlowAttach(dir, "trap '' TERM");
  spec.args = {"waitforattach", "", "{}"};
  spec.kubelet_timeout = Millis(100);
  ProcessResult r = RunOnceReadyForTerm(spec, dir, Millis(1100));
  EXPECT_TRUE(r.exit.killed_by_kubelet_timeout);
  EXPECT_TRUE(r.harness_deadline_hit);  // still running 1.1 s after SIGTERM
  EXPECT_EQ(r.exit.signal, SIGKILL);    // the harness's
}

TEST(SimulatorProcessRunner, DriverKilledByTheTermIsKubeletsTimeout) {
  ProcessSpec spec;
  spec.executable = TestDriver("test~slow-attach");
  spec.args = {"waitforattach", "", "{}"};
  spec.env_overrides = {{"TRAP_TERM", "die"}};
  spec.kubelet_timeout = Millis(100);
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_TRUE(r.exit.killed_by_kubelet_timeout);
  EXPECT_FALSE(r.harness_deadline_hit);
  EXPECT_EQ(r.exit.signal, SIGTERM);
  EXPECT_EQ(Judge("waitforattach", r.exit, r.combined).error, "timeout");
}

TEST(SimulatorProcessRunner, DriverTrappingTermAndExitingZeroIsParsed) {
  flexkit::testing::TempDir dir("flexsim-runner");
  ProcessSpec spec;
  spec.executable = WriteSlowAttach(
      dir, R"(trap 'printf "{\"status\":\"Success\",\"device\":\"/dev/late\"}\n"; exit 0' TERM)");
  spec.args = {"waitforattach", "", "{}"};
  spec.kubelet_timeout = Millis(200);
  ProcessResult r = RunOnceReadyForTerm(spec, dir);
  EXPECT_TRUE(r.exit.killed_by_kubelet_timeout);
  ASSERT_TRUE(r.exit.ok()) << r.combined;
  Verdict v = Judge("waitforattach", r.exit, r.combined);
  EXPECT_EQ(v.outcome, Outcome::kSuccess);
  EXPECT_EQ(v.status->device, "/dev/late");
}

TEST(SimulatorProcessRunner, OutputIsCapped) {
  ProcessSpec spec;
  spec.executable = TestDriver("test~flood");
  spec.args = {"init"};
  spec.output_cap = 100000;
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_TRUE(r.output_capped);
  EXPECT_EQ(r.combined.size(), 100000u);
}

TEST(SimulatorProcessRunner, MissingExecutableIsAnExecFailureWithNoOutput) {
  ProcessSpec spec;
  spec.executable = "/nonexistent/flexsim/driver";
  spec.args = {"init"};
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_TRUE(r.combined.empty());
  EXPECT_FALSE(r.exit.ok());
  EXPECT_EQ(Judge("init", r.exit, r.combined).error, "unexpected end of JSON input");
}

TEST(SimulatorProcessRunner, DriverRunsInItsOwnProcessGroup) {
  flexkit::testing::TempDir dir("flexsim-runner");
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.args = {"-c", "ps -o pgid= -p $$ > " + dir.Join("pgid") + "; echo $$ > " + dir.Join("pid")};
  ProcessResult r = BoostProcessRunner().Run(spec);
  ASSERT_TRUE(r.exit.ok()) << r.combined;
  std::string pgid = flexkit::testing::ReadFileText(dir.Join("pgid")),
              pid = flexkit::testing::ReadFileText(dir.Join("pid"));
  EXPECT_EQ(std::stol(pgid), std::stol(pid));
  EXPECT_NE(std::stol(pgid), static_cast<long>(::getpgrp()));
  EXPECT_FALSE(ProcessAlive(static_cast<pid_t>(std::stol(pid))));
}

}  // namespace
}  // namespace flexkit::sim
