// flexsim: calls FlexVolume drivers as kubelet and the attach/detach
// controller do, and judges their replies as kubelet's Go code does.
// Subcommands: judge, call, run, apply (README.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "simulator/call_command.h"
#include "simulator/judge.h"
#include "simulator/scenario.h"
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

std::map<std::string, std::string> KeyValues(const std::vector<std::string>& items,
                                             const char* flag) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument(std::string(flag) + " " + item + ": expected KEY=VALUE");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

flexkit::sim::Millis Seconds(double s) { return flexkit::sim::Millis(static_cast<long>(s * 1000)); }

// A run dir that exists for the command and is removed after, unless given.
class RunDir {
 public:
  explicit RunDir(std::string path) : path_(std::move(path)) {
    if (path_.empty()) {
      std::string pattern = std::filesystem::temp_directory_path().string() + "/flexsim-run-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("create run dir " + pattern);
      path_ = pattern;
      temporary_ = true;
    } else {
      std::filesystem::create_directories(path_);
    }
  }
  ~RunDir() {
    std::error_code ec;
    if (temporary_) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool temporary_ = false;
};

int Report(const flexkit::sim::ScenarioResult& r) {
  if (r.passed) {
    std::cerr << "PASS (" << r.steps_run << " steps)\n";
    return 0;
  }
  std::cerr << "FAIL: " << r.failure << "\n";
  return 1;
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

  auto* call = app.add_subcommand("call", "call one verb as kubelet does, on a throwaway node");
  flexkit::sim::CallCommand cc;
  std::vector<std::string> options, secrets, env;
  double timeout = 60, waitforattach_timeout = 600;
  std::int64_t fs_group = -1;
  bool pv = false;
  cc.volume.name = "vol1";
  cc.pod.pod_name = "pod-1";
  cc.pod.pod_namespace = "default";
  call->add_option("--driver", cc.driver, "driver executable (<plugindir>/vendor~drv/drv)")
      ->required();
  call->add_option("--node", cc.node, "node name (attach, isattached, detach)")
      ->capture_default_str();
  call->add_option("--profile", cc.profile, "1.7, 1.15 or current")->capture_default_str();
  call->add_option("verb", cc.verb, "the verb")->required();
  call->add_option("args", cc.args, "the verb's non-JSON arguments");
  call->add_option("--volume-name", cc.volume.name, "spec.Name(): PV or inline volume name")
      ->capture_default_str();
  call->add_option("--fs-type", cc.volume.fs_type, "flexVolume.fsType");
  call->add_flag("--read-only", cc.volume.read_only, "readOnly");
  call->add_flag("--pv", pv, "the volume comes from a PersistentVolume (not inline)");
  call->add_option("-o,--option", options, "flexVolume.options entry KEY=VALUE");
  call->add_option("--secret", secrets, "secret entry KEY=VALUE (mount only, sent base64)");
  call->add_option("--pod-name", cc.pod.pod_name)->capture_default_str();
  call->add_option("--pod-namespace", cc.pod.pod_namespace)->capture_default_str();
  call->add_option("--pod-uid", cc.pod.pod_uid);
  call->add_option("--service-account", cc.pod.service_account)->capture_default_str();
  call->add_option("--fs-group", fs_group, "pod securityContext.fsGroup");
  call->add_option("--env", env, "node environment KEY=VALUE for the driver");
  call->add_option("--timeout", timeout, "harness deadline in seconds (any verb)")
      ->capture_default_str();
  call->add_option("--waitforattach-timeout", waitforattach_timeout,
                   "kubelet's waitforattach timeout in seconds")
      ->capture_default_str();
  call->add_option("--output-cap", cc.settings.output_cap, "bytes of output kept")
      ->capture_default_str();
  call->add_option("--run-dir", cc.run_dir, "keep the node's directories here");
  call->add_option("--transcript", cc.transcript, "write the JSON transcript to this file");
  call->add_flag("--strict", cc.strict, "add warnings for what kubelet tolerates but is wrong");

  auto* run = app.add_subcommand("run", "run a scenario (README.md) with a live log");
  std::string scenario, run_driver, run_dir, run_transcript;
  bool quiet = false;
  run->add_option("scenario", scenario, "scenario YAML")->required();
  std::string driver_name;
  run->add_option("--driver", run_driver, "driver executable (overrides the scenario's)");
  run->add_option("--driver-name", driver_name, "install as this driver name (vendor/drv)");
  run->add_option("--run-dir", run_dir, "keep the nodes' directories here");
  run->add_option("--transcript", run_transcript, "write the JSON transcript to this file");
  run->add_flag("--quiet", quiet, "no live log");

  auto* apply = app.add_subcommand("apply", "mount the pods of a manifest on simulated nodes");
  std::string manifest;
  apply->add_option("manifest", manifest, "Kubernetes YAML")->required();
  apply->add_option("--driver", run_driver, "driver executable")->required();
  apply->add_option("--driver-name", driver_name, "install as this driver name (vendor/drv)");
  apply->add_option("--run-dir", run_dir, "keep the nodes' directories here");
  apply->add_option("--transcript", run_transcript, "write the JSON transcript to this file");
  apply->add_flag("--quiet", quiet, "no live log");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (judge->parsed()) return RunJudge(verb, exit_code, output_file, strict);
    if (call->parsed()) {
      cc.volume.options = KeyValues(options, "--option");
      cc.pod.secret = KeyValues(secrets, "--secret");
      cc.env = KeyValues(env, "--env");
      cc.volume.inline_volume = !pv;
      if (fs_group >= 0) cc.pod.fs_group = fs_group;
      cc.settings.harness_deadline = Seconds(timeout);
      cc.settings.waitforattach_timeout = Seconds(waitforattach_timeout);
      return flexkit::sim::RunCallCommand(cc);
    }
    if (run->parsed() || apply->parsed()) {
      if (::geteuid() != 0) throw std::runtime_error("needs root: nodes are mount namespaces");
      RunDir dir(run_dir);
      flexkit::sim::ScenarioOptions scenario_options;
      scenario_options.driver = run_driver;
      scenario_options.driver_name = driver_name;
      scenario_options.run_dir = dir.path();
      scenario_options.transcript = run_transcript;
      if (!quiet) scenario_options.log = [](const std::string& line) { std::cerr << line << "\n"; };
      if (run->parsed()) return Report(flexkit::sim::RunScenario(scenario, scenario_options));
      return Report(flexkit::sim::ApplyManifest(manifest, run_driver, scenario_options));
    }
  } catch (const std::exception& e) {
    std::cerr << "flexsim: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
