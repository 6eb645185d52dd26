#include "platform/run_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "platform/process_launch.h"
#include "platform/read_file.h"
#include "platform/unique_fd.h"

namespace flexkit::platform {

std::string FindInPath(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/bin:/usr/bin";
  for (std::size_t at = 0; at <= path.size();) {
    std::size_t end = path.find(':', at);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end == at ? "." : path.substr(at, end - at);
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  if (argv.empty()) {
    result.output = "run: empty argv";
    return result;
  }
  const std::string executable = FindInPath(argv[0]);
  if (executable.empty()) {
    result.output = "run " + argv[0] + ": not found in PATH";
    return result;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe2: ") + std::strerror(errno);
    return result;
  }
  const UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  const Launched child = Launch({.executable = executable,
                                 .args = {argv.begin() + 1, argv.end()},
                                 .stdout_fd = write_end.get(),
                                 .stderr_fd = write_end.get()});
  write_end.Reset();  // the child's copy is the only writer left
  if (child.pid < 0) {
    result.output = child.error;
    return result;
  }
  try {
    result.output = ReadToEnd(read_end.get(), "the output of " + argv[0]);
  } catch (const std::exception& e) {
    result.output = e.what();
  }
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string RunCommandOrThrow(const std::vector<std::string>& argv) {
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error(cmd + ": exit " + std::to_string(r.exit_code) + ": " + r.output);
  }
  return r.output;
}

}  // namespace flexkit::platform
