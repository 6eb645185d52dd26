#include "tests/fakes/fake_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::fakes::testing {

std::string ConvoyFakeBinary() { return flexkit::testing::BuiltBinary("fakes/convoy-fake"); }

std::vector<std::string> InPrivateMountNamespace(std::vector<std::string> argv) {
  if (!flexkit::testing::IsRoot()) return argv;
  argv.insert(argv.begin(), {"/usr/bin/unshare", "--mount", "--propagation", "private"});
  return argv;
}

Finished RunConvoyFake(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ConvoyFakeBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(20);
  auto r = flexkit::testing::RunProcess(argv, options);
  return {r.exit_code, r.out, r.err};
}

FakeProcess::FakeProcess(std::vector<std::string> argv, int ready_deadline_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  stdout_fd_ = fds[0];
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ready_deadline_ms);
  while (out.find("ready") == std::string::npos || out.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{stdout_fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      Kill();
      throw std::runtime_error("convoy-fake not ready in time; output: " + out);
    }
    char buf[512];
    ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) {
      int code = Wait();
      throw std::runtime_error("convoy-fake exited (" + std::to_string(code) +
                               ") before ready: " + out);
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

FakeProcess::~FakeProcess() {
  if (pid_ > 0) Kill();
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

int FakeProcess::Wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

int FakeProcess::Stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  return Wait();
}

void FakeProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  Wait();
}

}  // namespace flexkit::fakes::testing
