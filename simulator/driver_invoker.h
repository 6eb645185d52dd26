#pragma once
// One driver call as kubelet or the controller makes it, on one node: exec
// inside the node's namespace with its environment, kubelet's waitforattach
// timer, the harness's deadline, judging, and a transcript record with the
// mounts the call added or removed.
#include <optional>
#include <string>

#include "simulator/argv_builder.h"
#include "simulator/node.h"
#include "simulator/process_runner.h"
#include "simulator/redactor.h"
#include "simulator/transcript.h"

namespace flexkit::sim {

struct CallSettings {
  Millis harness_deadline{std::chrono::seconds(60)};
  Millis waitforattach_timeout{std::chrono::minutes(10)};  // kubelet's waitForAttachTimeout
  Millis held_open_grace{200};
  std::size_t output_cap = 16u << 20;
};

struct CallResult {
  Verdict verdict;              // unredacted: callers use device, attached, capabilities
  std::string harness_problem;  // non-empty: kubelet would hang, or the output was cut
  // The call's position among its transcript's calls (0 first).
  std::optional<std::size_t> record;
  bool ok() const { return harness_problem.empty() && verdict.outcome == Outcome::kSuccess; }
  bool not_supported() const {
    return harness_problem.empty() && verdict.outcome == Outcome::kNotSupported;
  }
};

class DriverInvoker {
 public:
  DriverInvoker(ProcessRunner& runner, Transcript& transcript, CallSettings settings = {})
      : runner_(runner), transcript_(transcript), settings_(settings) {}

  CallResult Call(Node& node, const std::string& component, const std::string& executable,
                  const Args& args, const Redactor& redactor);

  // Records a call answered from the Not-supported cache (driver not run).
  void RecordCached(Node& node, const std::string& component, const std::string& executable,
                    const Args& args, const Redactor& redactor);

  const CallSettings& settings() const { return settings_; }

 private:
  ProcessRunner& runner_;
  Transcript& transcript_;
  CallSettings settings_;
};

}  // namespace flexkit::sim
