#pragma once
// Runs a program to completion for tests: argv exactly as given (no shell),
// stdin from /dev/null, stdout and stderr captured separately, a deadline
// after which the whole process group is killed.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace flexkit::testing {

struct RunOptions {
  std::map<std::string, std::string> extra_env;  // added to the inherited environment
  std::string working_dir;                       // empty: inherit
  std::chrono::milliseconds deadline{std::chrono::seconds(60)};
};

struct ProcessResult {
  int exit_code = -1;   // valid when term_signal == 0
  int term_signal = 0;  // the signal that ended the process, 0 if it exited
  bool timed_out = false;
  std::string out;
  std::string err;
};

ProcessResult RunProcess(const std::vector<std::string>& argv, const RunOptions& options = {});

// Path of a binary built by this project (FLEXKIT_BUILD_DIR set by ctest).
std::string BuiltBinary(const std::string& relative_path);

// The live processes, zombies left out, whose environment holds `entry`
// ("NAME=value"): a program and every descendant that inherited it, found
// however slowly they started or however they detached.
std::vector<pid_t> LiveProcessesCarrying(const std::string& entry);

}  // namespace flexkit::testing
