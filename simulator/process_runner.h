#pragma once
// Running one driver process the way kubelet's os/exec does (stdin
// /dev/null, environment and working directory inherited, stdout and stderr
// one pipe as CombinedOutput sets them up), plus what the harness adds: a
// deadline for every call, detection of a descendant holding the output
// pipe, an output cap.
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
  // A pidfd of the node's holder (its mount and UTS namespaces), or -1:
  // exec in the caller's namespaces.
  int namespace_fd = -1;
  // Not empty: the process sees this hostname instead of the node's (a
  // controller's call, run on the node's mounts, sees the control plane's).
  std::string hostname;
  // kubelet's own timer (waitforattach only; zero = none): SIGTERM to the
  // driver, and nothing more (cmdWrapper.Stop's SIGKILL never reaches a
  // driver still running; see boost_process_runner.cc).
  Millis kubelet_timeout{0};
  // The harness's bound for any call: the whole process group is killed.
  Millis harness_deadline{std::chrono::seconds(60)};
  // How long after the driver exits its output pipes may stay open before a
  // descendant is blamed for holding them.
  Millis held_open_grace{200};
  std::size_t output_cap = 16u << 20;
};

// kCombined: fd 1 and fd 2 share one pipe (as in kubelet), so the bytes are
// in kubelet's order and cannot be told apart. kStdout/kStderr are for
// runners (fakes) that know.
enum class Stream { kStdout, kStderr, kCombined };

struct OutputChunk {
  Stream stream;
  std::string bytes;
};

struct ProcessResult {
  ExitStatus exit;
  std::string combined;               // fd 1 and fd 2 as kubelet's CombinedOutput reads them
  std::vector<OutputChunk> chunks;    // the same bytes, by stream when known
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
