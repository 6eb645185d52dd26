#pragma once
// Running one driver process the way kubelet's os/exec does (stdin
// /dev/null, environment and working directory inherited, stdout and stderr
// gathered as CombinedOutput), plus what the harness adds: a deadline for
// every call, detection of a descendant holding the output pipe, an output
// cap, and the stream each byte came from.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "simulator/judge.h"

namespace flexkit::sim {

using Millis = std::chrono::milliseconds;

struct ProcessSpec {
  std::string executable;                            // argv[0], an absolute path
  std::vector<std::string> args;                     // argv[1..]
  std::map<std::string, std::string> env_overrides;  // on top of the inherited environment
  // /proc/<holder>/ns/mnt of the node, or -1: exec in the caller's namespace.
  int mount_namespace_fd = -1;
  // kubelet's own timer (waitforattach only; zero = none): SIGTERM to the
  // driver, SIGKILL `kill_grace` later, as cmdWrapper.Stop does.
  Millis kubelet_timeout{0};
  Millis kill_grace{std::chrono::seconds(10)};
  // The harness's bound for any call: the whole process group is killed.
  Millis harness_deadline{std::chrono::seconds(60)};
  // How long after the driver exits its output pipes may stay open before a
  // descendant is blamed for holding them.
  Millis held_open_grace{200};
  std::size_t output_cap = 16u << 20;
};

enum class Stream { kStdout, kStderr };

struct OutputChunk {
  Stream stream;
  std::string bytes;
};

struct ProcessResult {
  ExitStatus exit;
  std::string combined;               // both streams in the order they were read
  std::vector<OutputChunk> chunks;    // the same bytes, by stream
  std::string spawn_error;            // exec failed (kubelet sees an exec error, no output)
  bool harness_deadline_hit = false;  // "would hang kubelet"
  bool output_held_open = false;      // driver exited, a descendant kept its stdout/stderr
  bool output_capped = false;
  Millis duration{0};
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual ProcessResult Run(const ProcessSpec& spec) = 0;
};

}  // namespace flexkit::sim
