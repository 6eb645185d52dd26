#pragma once
// The wall-clock window of every driver call of a case, in transcript
// order, so that the HTML report can place the backend's requests inside
// the call that made them. A ProcessRunner decorator notes when each
// process ran (per thread: the simulator's invoker runs the process and
// adds its transcript record on the same thread), and Observe, installed
// as the transcript's call observer, files that window under the record.
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance/backend_events.h"
#include "simulator/process_runner.h"
#include "simulator/transcript.h"

namespace flexkit::conform {

class CallTiming : public sim::ProcessRunner {
 public:
  explicit CallTiming(sim::ProcessRunner& inner) : inner_(inner) {}
  sim::ProcessResult Run(const sim::ProcessSpec& spec) override;
  // For each call the transcript records; a call that ran no process on
  // this runner (answered from the Not-supported cache) gets "now".
  void Observe(const sim::CallRecord& record);
  std::vector<CallWindow> Windows() const;

 private:
  sim::ProcessRunner& inner_;
  mutable std::mutex mutex_;
  std::map<std::thread::id, CallWindow> pending_;  // ran, not yet recorded
  std::vector<CallWindow> windows_;
};

}  // namespace flexkit::conform
