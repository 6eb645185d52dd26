// Launch, the harness's one way to start a process: what the child gets
// (its own process group, no blocked signals, the environment overrides,
// the given output fd, nothing else open) and what the caller learns when
// exec fails or the launching thread dies.
#include "platform/process_launch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include "tests/support/temp_dir.h"

namespace flexkit::platform {
namespace {

// Runs `spec` with its stdout to a file; returns what it wrote.
std::string OutputOf(LaunchSpec spec) {
  flexkit::testing::TempDir dir{"launch"};
  const std::string path = dir.path() + "/out";
  const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_GE(out, 0);
  spec.stdout_fd = out;
  const Launched child = Launch(spec);
  ::close(out);
  EXPECT_GT(child.pid, 0) << child.error;
  int status = 0;
  EXPECT_EQ(::waitpid(child.pid, &status, 0), child.pid);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  return flexkit::testing::ReadFileText(path);
}

TEST(Launch, TheChildHasItsOwnGroupAndTheEnvironmentOverrides) {
  const std::string text =
      OutputOf({.executable = "/bin/sh",
                .args = {"-c", "echo pgid=$(ps -o pgid= -p $$ | tr -d ' ') pid=$$ v=$FLEXKIT_X"},
                .env_overrides = {{"FLEXKIT_X", "x y"}}});
  const std::string pid =
      text.substr(text.find("pid=") + 4, text.find(" v=") - text.find("pid=") - 4);
  EXPECT_NE(text.find("pgid=" + pid + " pid=" + pid + " v=x y"), std::string::npos) << text;
}

TEST(Launch, TheChildStartsWithNoSignalBlockedAndNoFdButItsOwn) {
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &blocked, &old), 0);
  const int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec
  const std::string mask =
      OutputOf({.executable = "/bin/grep", .args = {"SigBlk", "/proc/self/status"}});
  const std::string fds = OutputOf({.executable = "/bin/ls", .args = {"/proc/self/fd"}});
  ::close(leaked);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &old, nullptr), 0);
  EXPECT_EQ(mask, "SigBlk:\t0000000000000000\n");
  EXPECT_EQ(fds, "0\n1\n2\n3\n");  // 3: the directory ls reads
}

TEST(Launch, AnExecFailureIsReportedNotAChildToReap) {
  const Launched child = Launch({.executable = "/nonexistent/driver"});
  EXPECT_EQ(child.pid, -1);
  EXPECT_NE(child.error.find("exec /nonexistent/driver: No such file or directory"),
            std::string::npos)
      << child.error;
  EXPECT_EQ(LaunchAndWait({.executable = "/nonexistent/driver"}), 127);
  EXPECT_EQ(LaunchAndWait({.executable = "/bin/sh", .args = {"-c", "exit 3"}}), 3);
  EXPECT_EQ(LaunchAndWait({.executable = "/bin/sh", .args = {"-c", "kill -9 $$"}}), -SIGKILL);
}

// A file open in a volume must not reach a child, even between vfork and
// exec: while the lock is held shared (a harness thread reading a volume's
// file), a launch waits.
TEST(Launch, WaitsWhileAFileInAVolumeIsOpen) {
  std::shared_lock reading(LaunchLock());
  std::atomic<bool> launched{false};
  std::thread launcher([&] {
    EXPECT_EQ(LaunchAndWait({.executable = "/bin/true"}), 0);
    launched = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(launched) << "launched while a volume's file was open";
  reading.unlock();
  launcher.join();
  EXPECT_TRUE(launched);
}

TEST(Launch, TheParentDeathSignalComesWhenTheLaunchingThreadEnds) {
  pid_t pid = -1;
  std::thread([&pid] {
    pid = Launch({.executable = "/bin/sleep", .args = {"30"}, .parent_death_signal = SIGKILL}).pid;
  }).join();
  ASSERT_GT(pid, 0);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace flexkit::platform
