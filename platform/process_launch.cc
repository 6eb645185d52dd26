#include "platform/process_launch.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
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

#include "platform/unique_fd.h"

// Boost.Process 1.81 is not fully header-only: the environment code is
// compiled here, in exactly one translation unit.
#include <boost/process/v2/impl/environment.ipp>

extern char** environ;

namespace flexkit::platform {
namespace bp = boost::process::v2;
namespace {

bp::error_code LastError() { return {errno, boost::system::system_category()}; }

// Child-side setup, run between vfork and exec: only system calls here.
struct ChildSetup {
  int exec_error_fd;  // close-on-exec: EOF means exec happened, 4 bytes are its errno
  int namespace_fd;
  const std::string* hostname;  // empty: the namespace's own
  const char* working_dir;      // the caller's cwd, re-entered after setns
  const char* const* envp;
  int parent_death_signal;
  pid_t parent;

  bp::error_code on_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&,
                          const char* const*) {
    launcher.env = envp;
    launcher.fd_whitelist.push_back(exec_error_fd);  // else closed before execve
    return {};
  }

  bp::error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&,
                               const char* const*) {
    if (::setpgid(0, 0) != 0) return LastError();
    if (parent_death_signal != 0) {
      if (::prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) return LastError();
      // The parent died before the signal was armed: nobody will stop us.
      if (::getppid() != parent) return {ESRCH, boost::system::system_category()};
    }
    // Blocked signals survive exec; kubelet's drivers start with none.
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) return LastError();
    if (namespace_fd >= 0) {
      // setns(CLONE_NEWNS) needs an fs_struct of our own; under TSan the
      // child already runs a helper thread sharing it.
      if (::unshare(CLONE_FS) != 0) return LastError();
      if (::setns(namespace_fd, kJoinedNamespaces) != 0) return LastError();
      // setns moved cwd to the namespace root; kubelet's child keeps its cwd.
      if (::chdir(working_dir) != 0) return LastError();
    }
    if (!hostname->empty()) {
      if (::unshare(CLONE_NEWUTS) != 0) return LastError();
      if (::sethostname(hostname->data(), hostname->size()) != 0) return LastError();
    }
    // 1.81's close_all leaves fds between whitelisted ones open: make every
    // fd above stderr close-on-exec so nothing leaks into the child.
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

}  // namespace

std::shared_mutex& LaunchLock() {
  static std::shared_mutex lock;
  return lock;
}

Launched Launch(const LaunchSpec& spec) {
  // Everything the child needs is built here: between vfork and exec only
  // system calls may run.
  std::vector<std::string> env_strings = MergedEnvironment(spec.env_overrides);
  std::vector<const char*> envp;
  for (const auto& e : env_strings) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  const std::string cwd = CurrentDirectory();
  UniqueFd devnull;
  if (spec.stdout_fd < 0 || spec.stderr_fd < 0) {
    devnull.Reset(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (devnull.get() < 0) return {-1, "open /dev/null: " + std::string(std::strerror(errno))};
  }
  const int out = spec.stdout_fd >= 0 ? spec.stdout_fd : devnull.get();
  const int err = spec.stderr_fd >= 0 ? spec.stderr_fd : devnull.get();
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::system_category(), "launch " + spec.executable + ": pipe");
  }
  UniqueFd error_read(error_pipe[0]);
  UniqueFd error_write(error_pipe[1]);

  boost::asio::io_context context;
  bp::error_code ec;
  ChildSetup setup{error_write.get(), spec.namespace_fd,        &spec.hostname, cwd.c_str(),
                   envp.data(),       spec.parent_death_signal, ::getpid()};
  // 1.81's (context, ec, ...) overload drops `ec` and throws: pass the executor.
  bp::posix::vfork_launcher launcher;
  std::unique_lock no_open_volume_files(LaunchLock());
  auto process = launcher(context.get_executor(), ec, spec.executable, spec.args,
                          bp::process_stdio{nullptr, out, err}, setup);
  error_write.Reset();
  int child_errno = 0;
  // The pipe closes at the child's exec (or brings its errno): only then
  // has it let go of the parent's fds, whether it was vforked or forked.
  if (!ec && ::read(error_read.get(), &child_errno, sizeof child_errno) == sizeof child_errno) {
    ec.assign(child_errno, boost::system::system_category());
  }
  no_open_volume_files.unlock();
  if (ec) {
    if (launcher.pid > 0) ::waitpid(launcher.pid, nullptr, 0);  // the child that failed exec
    return {-1, "exec " + spec.executable + ": " + ec.message()};
  }
  const pid_t pid = process.id();
  // The caller reaps it: Boost's handle must not reap or kill it when it goes.
  { auto released = process.detach(); }
  return {pid, ""};
}

int LaunchAndWait(const LaunchSpec& spec) {
  const Launched child = Launch(spec);
  if (child.pid < 0) return 127;
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace flexkit::platform
