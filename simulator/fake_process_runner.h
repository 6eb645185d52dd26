#pragma once
// A ProcessRunner for tests: no process; each call is answered by a
// function of its argv, and every spec is recorded.
#include <functional>
#include <mutex>
#include <vector>

#include "simulator/process_runner.h"

namespace flexkit::sim {

class FakeProcessRunner : public ProcessRunner {
 public:
  // Answers a call: the reply on stdout and the exit status.
  using Responder = std::function<ProcessResult(const ProcessSpec&)>;
  explicit FakeProcessRunner(Responder responder) : responder_(std::move(responder)) {}

  ProcessResult Run(const ProcessSpec& spec) override {
    std::lock_guard lock(mutex_);
    specs_.push_back(spec);
    return responder_(spec);
  }
  std::vector<ProcessSpec> specs() const {
    std::lock_guard lock(mutex_);
    return specs_;
  }

  // A reply printed on stdout with the given exit code.
  static ProcessResult Reply(const std::string& stdout_bytes, int exit_code = 0) {
    ProcessResult r;
    r.exit.exit_code = exit_code;
    r.combined = stdout_bytes;
    if (!stdout_bytes.empty()) r.chunks.push_back({Stream::kStdout, stdout_bytes});
    return r;
  }

 private:
  mutable std::mutex mutex_;
  Responder responder_;
  std::vector<ProcessSpec> specs_;
};

}  // namespace flexkit::sim
