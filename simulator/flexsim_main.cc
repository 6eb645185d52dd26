// flexsim: calls FlexVolume drivers as kubelet and the attach/detach
// controller do, and judges their replies as kubelet's Go code does.
// Subcommands: judge, call, run, apply (README.md).
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "simulator/judge.h"
#include "simulator/verdict_json.h"

namespace {

using flexkit::sim::ExitStatus;

constexpr auto kJsonErrors = nlohmann::json::error_handler_t::replace;

// Exit codes: 0 the command ran (whatever the verdict), 2 usage or I/O error.
int RunJudge(const std::string& verb, int exit_code, const std::string& output_file, bool strict) {
  std::ifstream in(output_file, std::ios::binary);
  if (!in) {
    std::cerr << "flexsim judge: read " << output_file << ": cannot open\n";
    return 2;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  ExitStatus exit;
  if (exit_code < 0) {
    exit.signal = -exit_code;
  } else {
    exit.exit_code = exit_code;
  }
  auto verdict = flexkit::sim::Judge(verb, exit, buffer.str());
  std::cout << flexkit::sim::VerdictToJson(verdict, strict).dump(-1, ' ', false, kJsonErrors)
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flexsim: kubelet and attach/detach controller emulator for FlexVolume drivers"};
  app.require_subcommand(1);

  auto* judge = app.add_subcommand("judge", "judge one reply as kubelet does (decision table)");
  std::string verb, output_file;
  int exit_code = 0;
  bool strict = false;
  judge->add_option("--verb", verb, "the verb that produced the output")->required();
  judge->add_option("--exit-code", exit_code, "exit code; negative N = killed by signal -N")
      ->required();
  judge->add_option("--output", output_file, "file holding stdout+stderr combined")->required();
  judge->add_flag("--strict", strict, "add warnings for what kubelet tolerates but is wrong");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (judge->parsed()) return RunJudge(verb, exit_code, output_file, strict);
  } catch (const std::exception& e) {
    std::cerr << "flexsim: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
