#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/temp_dir.h"

extern char** environ;

namespace flexkit::testing {
namespace {

std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv_in, const RunOptions& options) {
  if (argv_in.empty()) throw std::invalid_argument("RunProcess: empty argv");
  std::vector<std::string> argv_strings = argv_in;
  std::vector<std::string> env_strings = MergedEnvironment(options.extra_env);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);

  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + options.deadline;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

std::string BuiltBinary(const std::string& relative_path) {
  const char* dir = std::getenv("FLEXKIT_BUILD_DIR");
  if (dir == nullptr)
    throw std::runtime_error("FLEXKIT_BUILD_DIR is not set: run the tests through ctest");
  return std::string(dir) + "/" + relative_path;
}

std::vector<pid_t> LiveProcessesCarrying(const std::string& entry) {
  std::vector<pid_t> found;
  for (const auto& proc : std::filesystem::directory_iterator("/proc")) {
    const std::string name = proc.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFileText(proc.path().string() + "/stat");
    const size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos || stat.compare(comm_end, 3, ") Z") == 0) continue;
    // Mid-execve a process's environ reads empty until the new image's is
    // laid out: read again for a user process (kernel threads have none).
    std::istringstream fields(stat.substr(comm_end + 2));
    std::string field;
    unsigned long flags = 0;
    for (int i = 0; i < 7 && fields >> field; ++i) flags = std::strtoul(field.c_str(), nullptr, 10);
    constexpr unsigned long kKernelThread = 0x00200000;  // PF_KTHREAD
    std::string environ_text = ReadFileText(proc.path().string() + "/environ");
    for (int i = 0; i < 200 && environ_text.empty() && !(flags & kKernelThread) &&
                    std::filesystem::exists(proc.path());
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      environ_text = ReadFileText(proc.path().string() + "/environ");
    }
    const std::string env = std::string(1, '\0') + environ_text;
    if (env.find(std::string(1, '\0') + entry + std::string(1, '\0')) != std::string::npos) {
      found.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return found;
}

}  // namespace flexkit::testing
