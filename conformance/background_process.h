#pragma once
// A long-lived helper process (a fixture's cloud or daemon), started by
// platform::Launch (platform/process_launch.h): its own process group, stdout
// and stderr to a log file, killed with its parent (PR_SET_PDEATHSIG) so a
// killed flexconform leaves none behind, and stopped with SIGTERM then
// SIGKILL.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace flexkit::conform {

class BackgroundProcess {
 public:
  // Throws std::runtime_error naming argv[0] when it cannot start.
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::map<std::string, std::string>& env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // SIGSTOP (true) or SIGCONT (false) to the group: a hung process keeps
  // its socket, whose connections queue and are never answered.
  void Freeze(bool frozen);
  // SIGTERM, up to 5 s, then SIGKILL to the group; returns the exit status text.
  std::string Stop();

 private:
  pid_t pid_ = -1;
  std::string name_;
};

// Runs argv to completion (stdin /dev/null, output to `log_path`); returns
// the exit code, or -signal, or 127 when exec fails. Throws when the log
// cannot be opened.
int RunToCompletion(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::map<std::string, std::string>& env = {});

}  // namespace flexkit::conform
