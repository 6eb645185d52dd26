#include "conformance/background_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "platform/process_launch.h"

namespace flexkit::conform {
namespace {

struct ExecFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Stdin /dev/null, stdout and stderr appended to `log_path`, its own
// process group, SIGKILL when flexconform's launching thread dies.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path,
            const std::map<std::string, std::string>& env) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty argv");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) {
    throw std::runtime_error("start " + argv[0] + ": open " + log_path + ": " +
                             std::strerror(errno));
  }
  const platform::Launched child = platform::Launch({.executable = argv[0],
                                                     .args = {argv.begin() + 1, argv.end()},
                                                     .env_overrides = env,
                                                     .stdout_fd = log,
                                                     .stderr_fd = log,
                                                     .parent_death_signal = SIGKILL});
  ::close(log);
  if (child.pid < 0) throw ExecFailed("start " + argv[0] + ": " + child.error);
  return child.pid;
}

std::string StatusText(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::string& log_path,
                                     const std::map<std::string, std::string>& env)
    : pid_(Spawn(argv, log_path, env)), name_(argv.front()) {}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) Stop();
}

bool BackgroundProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void BackgroundProcess::Freeze(bool frozen) {
  if (pid_ <= 0) return;
  ::kill(-pid_, frozen ? SIGSTOP : SIGCONT);
}

std::string BackgroundProcess::Stop() {
  if (pid_ <= 0) return "not running";
  ::kill(-pid_, SIGTERM);
  ::kill(pid_, SIGTERM);
  ::kill(-pid_, SIGCONT);  // a frozen process must run to see its SIGTERM
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);  // anything the helper left in its group
  pid_ = -1;
  return StatusText(status);
}

int RunToCompletion(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::map<std::string, std::string>& env) {
  pid_t pid = 0;
  try {
    pid = Spawn(argv, log_path, env);
  } catch (const ExecFailed&) {
    return 127;  // as a shell answers
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace flexkit::conform
