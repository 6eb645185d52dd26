#pragma once
// The real ProcessRunner: the driver started by Launch (platform/process_launch.h:
// Boost.Process v2 with DESIGN §2's workarounds, its own process group so
// the harness can kill descendants), its output and exit read through a
// pipe and a pidfd against kubelet's timer and the harness's deadline.
#include "simulator/process_runner.h"

namespace flexkit::sim {

class BoostProcessRunner : public ProcessRunner {
 public:
  ProcessResult Run(const ProcessSpec& spec) override;
};

}  // namespace flexkit::sim
