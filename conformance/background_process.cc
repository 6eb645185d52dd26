#include "conformance/background_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace flexkit::conform {
namespace {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path,
            const std::map<std::string, std::string>& env) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  // The environment is built before fork: the child of a threaded process
  // may only make async-signal-safe calls.
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> entries;
  for (const auto& [k, v] : merged) entries.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : entries) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("start " + argv[0] + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  return pid;
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
  pid_t pid = Spawn(argv, log_path, env);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace flexkit::conform
