#include "simulator/boost_process_runner.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/posix/vfork_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <cerrno>
#include <cstring>
#include <system_error>

// Boost.Process 1.81 is not fully header-only: the environment code is
// compiled here, in exactly one translation unit.
#include <boost/process/v2/impl/environment.ipp>

extern char** environ;

namespace flexkit::sim {
namespace bp = boost::process::v2;
namespace {

using Clock = std::chrono::steady_clock;

bp::error_code LastError() { return {errno, boost::system::system_category()}; }

// Child-side setup, run between vfork and exec: only system calls here.
struct ChildSetup {
  int exec_error_fd;  // close-on-exec: EOF means exec happened, 4 bytes are its errno
  int mount_namespace_fd;
  const char* working_dir;  // the caller's cwd, re-entered after setns
  const char* const* envp;

  bp::error_code on_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&,
                          const char* const*) {
    launcher.env = envp;
    launcher.fd_whitelist.push_back(exec_error_fd);  // else closed before execve
    return {};
  }

  bp::error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&,
                               const char* const*) {
    if (::setpgid(0, 0) != 0) return LastError();
    // Blocked signals survive exec; kubelet's drivers start with none.
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) return LastError();
    if (mount_namespace_fd >= 0) {
      // setns(CLONE_NEWNS) needs an fs_struct of our own; under TSan the
      // child already runs a helper thread sharing it.
      if (::unshare(CLONE_FS) != 0) return LastError();
      if (::setns(mount_namespace_fd, CLONE_NEWNS) != 0) return LastError();
      // setns moved cwd to the namespace root; kubelet's child keeps its cwd.
      if (::chdir(working_dir) != 0) return LastError();
    }
    // 1.81's close_all leaves fds between whitelisted ones open: make every
    // fd above stderr close-on-exec so nothing leaks into the driver.
    if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
      return LastError();
    }
    return {};
  }

  // 1.81 detects this hook with a five-argument signature but calls the
  // four-argument one: both must exist, or exit() runs in the vfork child
  // (atexit handlers and stdio buffers of the parent, corrupted).
  void on_exec_error(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*,
                     const bp::error_code& ec) {
    Fail(ec);
  }
  void on_exec_error(bp::posix::default_launcher&, const bp::error_code&,
                     const bp::filesystem::path&, const char* const*, const bp::error_code& ec) {
    Fail(ec);
  }
  // Reports the errno where a real fork (sanitizers turn vfork into fork)
  // cannot share it with the parent, then exits as a shell would.
  [[noreturn]] void Fail(const bp::error_code& ec) {
    int err = ec.value();
    ssize_t ignored = ::write(exec_error_fd, &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
};

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

std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (overrides.count(key) == 0) env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

std::string CurrentDirectory() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "/";
  return buf.data();
}

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
  const auto start = Clock::now();
  // One pipe for both fd 1 and fd 2, as os/exec sets up CombinedOutput
  // (Stdout == Stderr): the bytes arrive in exactly the order kubelet reads.
  Pipe out;
  std::vector<std::string> env_strings = MergedEnvironment(spec.env_overrides);
  std::vector<const char*> envp;
  for (const auto& e : env_strings) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  std::string cwd = CurrentDirectory();

  Pipe exec_error;
  boost::asio::io_context context;
  bp::error_code ec;
  ChildSetup setup{exec_error.write, spec.mount_namespace_fd, cwd.c_str(), envp.data()};
  // 1.81's (context, ec, ...) overload drops `ec` and throws: pass the executor.
  bp::posix::vfork_launcher launcher;
  auto process = launcher(context.get_executor(), ec, spec.executable, spec.args,
                          bp::process_stdio{nullptr, out.write, out.write}, setup);
  out.CloseWrite();
  exec_error.CloseWrite();
  int child_errno = 0;
  if (!ec && ::read(exec_error.read, &child_errno, sizeof child_errno) == sizeof child_errno) {
    ec.assign(child_errno, boost::system::system_category());
  }
  if (ec) {
    if (launcher.pid > 0) ::waitpid(launcher.pid, nullptr, 0);  // the child that failed exec
    result.spawn_error = "exec " + spec.executable + ": " + ec.message();
    result.exit.exit_code = 127;
    return result;
  }
  const pid_t pid = process.id();
  // We reap the driver ourselves, through our own pidfd; Boost's handle must
  // not reap or kill it when it goes away.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    ::kill(-pid, SIGKILL);
    throw std::system_error(errno, std::system_category(), "pidfd_open of driver process");
  }
  { auto released = process.detach(); }

  const auto harness_deadline = start + spec.harness_deadline;
  auto kubelet_deadline =
      spec.kubelet_timeout.count() > 0 ? start + spec.kubelet_timeout : Clock::time_point::max();
  auto exited_at = Clock::time_point::max();
  bool exited = false;
  std::vector<char> buffer(64 * 1024);

  auto kill_group = [&] { ::kill(-pid, SIGKILL); };
  auto stop_reading = [&] { out.CloseRead(); };

  while (!exited || out.read >= 0) {
    auto now = Clock::now();
    if (!exited && now >= kubelet_deadline) {
      // cmdWrapper.Stop (k8s.io/utils exec): SIGTERM to the driver only, not
      // its group. Its SIGKILL 10 s later fires only when ProcessState is
      // set, i.e. after the driver was reaped: it never reaches a running
      // driver, and CombinedOutput keeps waiting (the harness deadline).
      ::kill(pid, SIGTERM);
      result.exit.killed_by_kubelet_timeout = true;
      kubelet_deadline = Clock::time_point::max();
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
    auto wake = std::min({harness_deadline, kubelet_deadline,
                          exited ? exited_at + spec.held_open_grace : Clock::time_point::max()});
    int timeout_ms = -1;
    if (wake != Clock::time_point::max()) {
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
        exited_at = Clock::now();
      }
    }
  }
  if (!exited) {
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid) DecodeWaitStatus(status, result.exit);
  }
  ::close(pidfd);
  result.duration = std::chrono::duration_cast<Millis>(Clock::now() - start);
  return result;
}

}  // namespace flexkit::sim
