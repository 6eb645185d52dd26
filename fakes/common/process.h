#pragma once
// Runs an external program (mkfs, tar) to completion: argv as given, no
// shell, stdin /dev/null, stdout and stderr captured together.
#include <string>
#include <vector>

namespace flexkit::fakes {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or not started
  std::string output;
};

CommandResult RunCommand(const std::vector<std::string>& argv);
// Runs it and throws std::runtime_error("<argv[0]> ...: exit N: <output>") unless it exits 0.
std::string RunCommandOrThrow(const std::vector<std::string>& argv);

}  // namespace flexkit::fakes
