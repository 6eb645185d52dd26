// flexsim: calls FlexVolume drivers as kubelet and the attach/detach
// controller do, and judges their replies as kubelet's Go code does.
// Subcommands: judge, call, run, apply, record, check-shapes (README.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "platform/read_file.h"
#include "simulator/call_command.h"
#include "simulator/judge.h"
#include "simulator/recording.h"
#include "simulator/scenario.h"
#include "simulator/shape_check.h"
#include "simulator/verdict_json.h"

namespace {

using flexkit::sim::ExitStatus;

constexpr auto kJsonErrors = nlohmann::json::error_handler_t::replace;

// Exit codes: 0 the command ran (whatever the verdict), 2 usage or I/O error.
int RunJudge(const std::string& verb, int exit_code, const std::string& output_file, bool strict) {
  std::string output;
  try {
    output = flexkit::platform::ReadWholeFile(output_file);
  } catch (const std::system_error& e) {
    std::cerr << "flexsim judge: " << e.what() << "\n";
    return 2;
  }
  ExitStatus exit;
  if (exit_code < 0) {
    exit.signal = -exit_code;
  } else {
    exit.exit_code = exit_code;
  }
  auto verdict = flexkit::sim::Judge(verb, exit, output);
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
  if (!r.failure.empty()) std::cerr << "FAIL: " << r.failure << "\n";
  for (const auto& p : r.problems) std::cerr << "FAIL: " << p << "\n";
  return 1;
}

std::string SelfDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

// Exit codes: 0 every recorded call has flexsim's shape, 1 a gap was found.
int RunCheckShapes(const std::string& log, const std::string& profile,
                   const std::string& driver_name) {
  const auto calls = flexkit::sim::ReadRecording(log);
  const auto gaps =
      flexkit::sim::CheckShapes(calls, flexkit::sim::FindProfile(profile), driver_name);
  for (const auto& g : gaps)
    std::cout << log << ":" << g.line << ": " << g.verb << ": " << g.what << "\n";
  std::cout << calls.size() << " recorded calls, " << gaps.size()
            << " fidelity gaps against flexsim's " << profile << " profile\n";
  return gaps.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flexsim: kubelet and attach/detach controller emulator for FlexVolume drivers"};
  app.set_version_flag("--version", std::string("flexsim ") + FLEXKIT_VERSION);
  app.footer(
      "Exit codes: 0 success (judge: whatever the verdict; call: the kubelet operation\n"
      "succeeded; run, apply: every step passed, every reply was usable and nothing was\n"
      "left bound; check-shapes: no gap), 1 the operation, a step or a shape failed,\n"
      "2 usage or I/O error, 3 call: the harness had to stop the driver (it would hang\n"
      "kubelet, or its output passed the cap).");
  app.require_subcommand(1);

  auto* judge = app.add_subcommand("judge", "judge one reply as kubelet does (decision table)");
  std::string verb, output_file;
  int exit_code = 0;
  bool strict = false;
  judge->add_option("--verb", verb, "the verb that produced the output")->required();
  judge->add_option("--exit-code", exit_code, "exit code; negative N = killed by signal -N")
      ->check(CLI::Range(-64, 255))
      ->required();
  judge->add_option("--output", output_file, "file holding stdout+stderr combined")
      ->required()
      ->check(CLI::ExistingFile);
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

  auto* record = app.add_subcommand(
      "record",
      "record a real cluster's driver calls: put flexsim-record-shim in place of a driver "
      "(install) or take it out again (uninstall)");
  record->require_subcommand(1);
  flexkit::sim::RecordInstall rec;
  rec.shim = SelfDir() + "/flexsim-record-shim";
  auto* record_install = record->add_subcommand(
      "install", "link the driver to .<name>.real and rename the shim over its name (atomic)");
  auto* record_uninstall =
      record->add_subcommand("uninstall", "rename .<name>.real back over the shim");
  for (auto* sub : {record_install, record_uninstall}) {
    sub->add_option("--plugin-dir", rec.plugin_dir, "kubelet's volume plugin dir")->required();
    sub->add_option("--driver", rec.driver_dir, "the driver's folder, vendor~driver")->required();
  }
  record_install->add_option("--log", rec.log,
                             "where the shim appends its JSON lines (absolute; default "
                             "/var/log/flexsim-record/<vendor~driver>.jsonl)");
  record_install->add_option("--shim", rec.shim, "the shim binary")->capture_default_str();

  auto* shapes = app.add_subcommand(
      "check-shapes",
      "report every recorded call that flexsim would never make, or would make differently, "
      "for that kubelet version (exit 1 when there is one)");
  std::string shapes_log, shapes_profile = "current", shapes_driver;
  shapes->add_option("log", shapes_log, "a flexsim-record-shim log")->required();
  shapes->add_option("--profile", shapes_profile, "the recorded kubelet's version profile")
      ->capture_default_str();
  shapes->add_option("--driver-name", shapes_driver,
                     "vendor/driver (default: read from the recorded paths)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (judge->parsed()) return RunJudge(verb, exit_code, output_file, strict);
    if (record_install->parsed()) {
      flexkit::sim::InstallRecorder(rec);
      std::cout << "flexsim record: " << rec.plugin_dir << "/" << rec.driver_dir
                << " now runs through flexsim-record-shim\n";
      return 0;
    }
    if (record_uninstall->parsed()) {
      flexkit::sim::UninstallRecorder(rec.plugin_dir, rec.driver_dir);
      std::cout << "flexsim record: " << rec.plugin_dir << "/" << rec.driver_dir
                << " runs the driver directly again\n";
      return 0;
    }
    if (shapes->parsed()) return RunCheckShapes(shapes_log, shapes_profile, shapes_driver);
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
