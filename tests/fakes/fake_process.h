#pragma once
// Runs convoy-fake in the background for a test: waits for its ready line,
// stops it with SIGTERM (or kills it with SIGKILL) and reaps it.
#include <sys/types.h>

#include <string>
#include <vector>

namespace flexkit::fakes::testing {

class FakeProcess {
 public:
  // Starts argv; throws unless a line containing "ready" arrives on stdout
  // within the deadline (the output so far is in the message).
  explicit FakeProcess(std::vector<std::string> argv, int ready_deadline_ms = 10000);
  ~FakeProcess();
  FakeProcess(const FakeProcess&) = delete;
  FakeProcess& operator=(const FakeProcess&) = delete;

  // SIGTERM, then wait; returns the exit code (or 128+signal).
  int Stop();
  // SIGKILL, then wait.
  void Kill();
  // Waits for it to exit on its own; the exit code (or 128+signal).
  int Wait();
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
};

// Path of the built convoy-fake binary.
std::string ConvoyFakeBinary();
// argv run in a mount namespace of its own (as root; others cannot mount),
// so a daemon's mounts never reach the test runner's namespace and vanish
// with the daemon.
std::vector<std::string> InPrivateMountNamespace(std::vector<std::string> argv);
// Runs convoy-fake to completion (for refusals): exit code and both streams.
struct Finished {
  int exit_code;
  std::string out, err;
};
Finished RunConvoyFake(const std::vector<std::string>& args);

}  // namespace flexkit::fakes::testing
