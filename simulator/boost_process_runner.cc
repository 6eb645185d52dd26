#include "simulator/boost_process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "platform/process_launch.h"

namespace flexkit::sim {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::system_category(), "create output pipe for driver");
    }
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  void CloseRead() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void CloseWrite() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

void AppendChunk(ProcessResult& r, const char* data, std::size_t n) {
  if (n == 0) return;
  r.combined.append(data, n);
  if (r.chunks.empty()) r.chunks.push_back({Stream::kCombined, ""});
  r.chunks.back().bytes.append(data, n);
}

void DecodeWaitStatus(int status, ExitStatus& exit) {
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

ProcessResult BoostProcessRunner::Run(const ProcessSpec& spec) {
  ProcessResult result;
  const auto start = SteadyClock::now();
  // One pipe for both fd 1 and fd 2, as os/exec sets up CombinedOutput
  // (Stdout == Stderr): the bytes arrive in exactly the order kubelet reads.
  Pipe out;
  const platform::Launched child = platform::Launch({.executable = spec.executable,
                                                     .args = spec.args,
                                                     .env_overrides = spec.env_overrides,
                                                     .namespace_fd = spec.namespace_fd,
                                                     .hostname = spec.hostname,
                                                     .stdout_fd = out.write,
                                                     .stderr_fd = out.write});
  out.CloseWrite();
  if (child.pid < 0) {
    result.spawn_error = child.error;
    result.exit.exit_code = 127;
    return result;
  }
  const pid_t pid = child.pid;
  // We reap the driver ourselves, through a pidfd.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    ::kill(-pid, SIGKILL);
    throw std::system_error(errno, std::system_category(), "pidfd_open of driver process");
  }

  const auto harness_deadline = start + spec.harness_deadline;
  auto kubelet_deadline = spec.kubelet_timeout.count() > 0 ? start + spec.kubelet_timeout
                                                           : SteadyClock::time_point::max();
  auto exited_at = SteadyClock::time_point::max();
  bool exited = false;
  std::vector<char> buffer(64 * 1024);

  auto kill_group = [&] { ::kill(-pid, SIGKILL); };
  auto stop_reading = [&] { out.CloseRead(); };

  while (!exited || out.read >= 0) {
    auto now = SteadyClock::now();
    if (!exited && now >= kubelet_deadline) {
      // cmdWrapper.Stop (k8s.io/utils exec): SIGTERM to the driver only, not
      // its group. Its SIGKILL 10 s later fires only when ProcessState is
      // set, i.e. after the driver was reaped: it never reaches a running
      // driver, and CombinedOutput keeps waiting (the harness deadline).
      ::kill(pid, SIGTERM);
      result.exit.killed_by_kubelet_timeout = true;
      kubelet_deadline = SteadyClock::time_point::max();
    }
    if (now >= harness_deadline && !result.harness_deadline_hit) {
      result.harness_deadline_hit = true;
      kill_group();
      stop_reading();
    }
    if (exited && now >= exited_at + spec.held_open_grace && out.read >= 0) {
      result.output_held_open = true;
      kill_group();
      stop_reading();
      break;
    }
    auto wake =
        std::min({harness_deadline, kubelet_deadline,
                  exited ? exited_at + spec.held_open_grace : SteadyClock::time_point::max()});
    int timeout_ms = -1;
    if (wake != SteadyClock::time_point::max()) {
      auto left = std::chrono::duration_cast<Millis>(wake - now).count() + 1;
      timeout_ms = static_cast<int>(std::max<long>(0, std::min<long>(left, 1000000)));
    }
    pollfd fds[2] = {{out.read, POLLIN, 0}, {exited ? -1 : pidfd, POLLIN, 0}};
    int n = ::poll(fds, 2, timeout_ms);
    if (n < 0 && errno != EINTR) {
      kill_group();
      throw std::system_error(errno, std::system_category(), "poll driver output");
    }
    if (fds[0].fd >= 0 && fds[0].revents != 0) {
      ssize_t got = ::read(fds[0].fd, buffer.data(), buffer.size());
      if (got == 0 || (got < 0 && errno != EINTR)) {
        out.CloseRead();
      } else if (got > 0) {
        std::size_t room = spec.output_cap - std::min(spec.output_cap, result.combined.size());
        std::size_t take = std::min<std::size_t>(room, static_cast<std::size_t>(got));
        AppendChunk(result, buffer.data(), take);
        if (take < static_cast<std::size_t>(got)) {
          result.output_capped = true;
          kill_group();
          stop_reading();
        }
      }
    }
    if (!exited && fds[1].revents != 0) {
      int status = 0;
      if (::waitpid(pid, &status, 0) == pid) {
        DecodeWaitStatus(status, result.exit);
        exited = true;
        exited_at = SteadyClock::now();
      }
    }
  }
  if (!exited) {
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid) DecodeWaitStatus(status, result.exit);
  }
  ::close(pidfd);
  result.duration = std::chrono::duration_cast<Millis>(SteadyClock::now() - start);
  return result;
}

}  // namespace flexkit::sim
