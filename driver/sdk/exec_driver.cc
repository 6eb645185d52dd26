#include "driver/sdk/exec_driver.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "driver/sdk/crash_guard.h"
#include "driver/sdk/logging.h"
#include "driver/sdk/write_fully.h"

namespace flexvolume {
namespace {

// Moves the reply channel off fd 1 and silences fds 1 and 2. Returns the
// reply descriptor (-1 if stdout was closed: then there is nowhere to reply).
int IsolateStdio() {
  int reply_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  // Fill any closed standard descriptor so later opens cannot land on it.
  int fd;
  while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO) {
  }
  if (fd > STDERR_FILENO) close(fd);
  int devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0) {
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    if (devnull > STDERR_FILENO) close(devnull);
  }
  return reply_fd;
}

}  // namespace

void ExecDriver(Driver& driver, int argc, char** argv, const ExecConfig& config) {
  const int reply_fd = IsolateStdio();
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  InstallCrashGuard(reply_fd, args.empty() ? "" : args[0]);
  if (!config.log.file.empty() || config.log.syslog) InitLogging(config.log);

  // kubelet runs init on every probe, getvolumename on most volume
  // operations and the controller isattached for every volume every minute;
  // all three are read-only, so only their failures are worth a log line
  // (and opening the log on each exec).
  const bool quiet =
      !args.empty() && (args[0] == "init" || args[0] == "getvolumename" || args[0] == "isattached");
  const auto started = std::chrono::steady_clock::now();
  if (!quiet) LogInfo("call: " + DescribeCall(args));
  const DriverStatus reply = Dispatch(driver, args, config.dispatch);
  const std::string text = RenderReply(reply);
  const int exit_code = ExitCodeFor(reply);
  if (!quiet || reply.IsFailure()) {
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    LogInfo((args.empty() ? std::string("(no verb)") : args[0]) + " replied after " +
            std::to_string(elapsed_ms) + " ms, exit " + std::to_string(exit_code) + ": " +
            text.substr(0, text.size() - 1));
    FlushLog();
  }

  if (ClaimReply(exit_code)) {
    // A reader that went away must not turn into a SIGPIPE death.
    signal(SIGPIPE, SIG_IGN);
    WriteFully(reply_fd, text.data(), text.size());
  }
  _exit(exit_code);
}

}  // namespace flexvolume
