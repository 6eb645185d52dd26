#pragma once
// Runs a program to completion and keeps what it printed (the fake daemon's
// mkfs, tar and truncate): argv as given, no shell, started by Launch
// (process_launch.h), stdin /dev/null, stdout and stderr captured together.
#include <string>
#include <vector>

namespace flexkit::platform {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or not started (output says why)
  std::string output;
};

// argv[0] without a '/' is looked up in PATH, as execvp does.
CommandResult RunCommand(const std::vector<std::string>& argv);
// Runs it and throws std::runtime_error("<argv> : exit N: <output>") unless it exits 0.
std::string RunCommandOrThrow(const std::vector<std::string>& argv);

// The executable file PATH (or, unset, execvp's default) names `name`
// by, or "" when there is none.
std::string FindInPath(const std::string& name);

}  // namespace flexkit::platform
