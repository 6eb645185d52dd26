#pragma once
// The real ProcessRunner, on Boost.Process v2 (1.81) with the workarounds of
// DESIGN §2: every fd above 2 marked close-on-exec in the child (1.81's
// close_all skips ranges), _exit(127) on exec failure (the launcher's exit()
// would run the parent's atexit handlers), and its own process group so the
// harness can kill descendants.
#include "simulator/process_runner.h"

namespace flexkit::sim {

class BoostProcessRunner : public ProcessRunner {
 public:
  ProcessResult Run(const ProcessSpec& spec) override;
};

}  // namespace flexkit::sim
