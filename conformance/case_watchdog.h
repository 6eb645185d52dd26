#pragma once
// A case whose harness stalls (a deadlock in flexconform, a kernel wait
// that never ends) must not hold a CI gate forever. Every driver call has
// a deadline; the time between calls is the harness's own. The worker
// marks each driver call's start and end in a file, and the runner stops a
// worker whose mark is older than StallLimit, reporting what its threads
// and processes were waiting in.
#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "conformance/profile.h"
#include "simulator/process_runner.h"

namespace flexkit::conform {

// Worker side: runs every call through `inner`, marking the progress file
// at its start and end with the call's number and verb (no argument: the
// options carry secrets).
class ProgressMark : public sim::ProcessRunner {
 public:
  ProgressMark(sim::ProcessRunner& inner, const std::string& path);
  ~ProgressMark() override;
  ProgressMark(const ProgressMark&) = delete;
  ProgressMark& operator=(const ProgressMark&) = delete;
  sim::ProcessResult Run(const sim::ProcessSpec& spec) override;

 private:
  void Mark(const std::string& text);
  sim::ProcessRunner& inner_;
  int fd_ = -1;
  std::mutex mutex_;
  int calls_ = 0;
};

// Runner side: when the mark was last written and what it says.
struct Progress {
  std::chrono::system_clock::time_point at;
  std::string last;  // "call 12 (mount) started", "no driver call yet"
};
std::optional<Progress> ReadProgress(const std::string& path);

// How long a case's harness may go without starting or ending a driver
// call: the longest call deadline, then a command fixture's hook, then a
// minute of the harness's own work.
std::chrono::milliseconds StallLimit(const DriverProfile& profile);

// Why a worker started at `started_at` counts as stalled at `now`: its last
// mark (or, with none, its start) is `limit` old. "" while it is not.
std::string StallOf(const std::optional<Progress>& progress,
                    std::chrono::system_clock::time_point started_at,
                    std::chrono::system_clock::time_point now, std::chrono::milliseconds limit);

// What process `pid` and the processes it started are waiting in: each
// thread's kernel wait channel, each child's command and state.
std::string DescribeWaits(pid_t pid);

}  // namespace flexkit::conform
