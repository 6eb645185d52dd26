// flexsim: calls FlexVolume drivers as kubelet and the attach/detach
// controller do, and judges their replies as kubelet's Go code does.
// Subcommands: judge, call, run, apply, record, check-shapes (README.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

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

enum class Mode { kJudge, kCall, kRun, kApply, kRecordInstall, kRecordUninstall, kCheckShapes };

struct JudgeRequest {
  std::string verb, output_file;
  int exit_code = 0;
  bool strict = false;
};

// The call command, and the options that go into it once parsed.
struct CallRequest {
  flexkit::sim::CallCommand command;
  std::vector<std::string> options, secrets, env;
  double timeout = 60, waitforattach_timeout = 600;
  std::int64_t fs_group = -1;
  bool pv = false;
};

// run and apply share their options: only one of them is ever parsed.
struct NodesRequest {
  std::string scenario, manifest, driver, driver_name, run_dir, transcript;
  bool quiet = false;
};

struct CheckShapesRequest {
  std::string log, profile = "current", driver_name;
};

// Everything the command line asks for: what each subcommand below reads.
struct Request {
  Mode mode = Mode::kJudge;
  JudgeRequest judge;
  CallRequest call;
  NodesRequest nodes;
  flexkit::sim::RecordInstall record;
  CheckShapesRequest shapes;
};

CLI::App* AddJudgeCommand(CLI::App& app, JudgeRequest& r) {
  auto* judge = app.add_subcommand("judge", "judge one reply as kubelet does (decision table)");
  judge->add_option("--verb", r.verb, "the verb that produced the output")->required();
  judge->add_option("--exit-code", r.exit_code, "exit code; negative N = killed by signal -N")
      ->check(CLI::Range(-64, 255))
      ->required();
  judge->add_option("--output", r.output_file, "file holding stdout+stderr combined")
      ->required()
      ->check(CLI::ExistingFile);
  judge->add_flag("--strict", r.strict, "add warnings for what kubelet tolerates but is wrong");
  return judge;
}

void AddCallVolumeOptions(CLI::App& call, CallRequest& r) {
  auto& volume = r.command.volume;
  call.add_option("--volume-name", volume.name, "spec.Name(): PV or inline volume name")
      ->capture_default_str();
  call.add_option("--fs-type", volume.fs_type, "flexVolume.fsType");
  call.add_flag("--read-only", volume.read_only, "readOnly");
  call.add_flag("--pv", r.pv, "the volume comes from a PersistentVolume (not inline)");
  call.add_option("-o,--option", r.options, "flexVolume.options entry KEY=VALUE");
  call.add_option("--secret", r.secrets, "secret entry KEY=VALUE (mount only, sent base64)");
}

void AddCallPodOptions(CLI::App& call, CallRequest& r) {
  auto& pod = r.command.pod;
  call.add_option("--pod-name", pod.pod_name)->capture_default_str();
  call.add_option("--pod-namespace", pod.pod_namespace)->capture_default_str();
  call.add_option("--pod-uid", pod.pod_uid);
  call.add_option("--service-account", pod.service_account)->capture_default_str();
  call.add_option("--fs-group", r.fs_group, "pod securityContext.fsGroup");
}

void AddCallHarnessOptions(CLI::App& call, CallRequest& r) {
  auto& cc = r.command;
  call.add_option("--env", r.env, "node environment KEY=VALUE for the driver");
  call.add_option("--timeout", r.timeout, "harness deadline in seconds (any verb)")
      ->capture_default_str();
  call.add_option("--waitforattach-timeout", r.waitforattach_timeout,
                  "kubelet's waitforattach timeout in seconds")
      ->capture_default_str();
  call.add_option("--output-cap", cc.settings.output_cap, "bytes of output kept")
      ->capture_default_str();
  call.add_option("--run-dir", cc.run_dir, "keep the node's directories here");
  call.add_option("--transcript", cc.transcript, "write the JSON transcript to this file");
  call.add_flag("--strict", cc.strict, "add warnings for what kubelet tolerates but is wrong");
}

CLI::App* AddCallCommand(CLI::App& app, CallRequest& r) {
  auto* call = app.add_subcommand("call", "call one verb as kubelet does, on a throwaway node");
  auto& cc = r.command;
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
  AddCallVolumeOptions(*call, r);
  AddCallPodOptions(*call, r);
  AddCallHarnessOptions(*call, r);
  return call;
}

// The options after the scenario or manifest, alike for run and apply.
void AddNodesOptions(CLI::App& sub, NodesRequest& r) {
  sub.add_option("--driver-name", r.driver_name, "install as this driver name (vendor/drv)");
  sub.add_option("--run-dir", r.run_dir, "keep the nodes' directories here");
  sub.add_option("--transcript", r.transcript, "write the JSON transcript to this file");
  sub.add_flag("--quiet", r.quiet, "no live log");
}

CLI::App* AddRunCommand(CLI::App& app, NodesRequest& r) {
  auto* run = app.add_subcommand("run", "run a scenario (README.md) with a live log");
  run->add_option("scenario", r.scenario, "scenario YAML")->required();
  run->add_option("--driver", r.driver, "driver executable (overrides the scenario's)");
  AddNodesOptions(*run, r);
  return run;
}

CLI::App* AddApplyCommand(CLI::App& app, NodesRequest& r) {
  auto* apply = app.add_subcommand("apply", "mount the pods of a manifest on simulated nodes");
  apply->add_option("manifest", r.manifest, "Kubernetes YAML")->required();
  apply->add_option("--driver", r.driver, "driver executable")->required();
  AddNodesOptions(*apply, r);
  return apply;
}

void AddDriverFolderOptions(CLI::App& sub, flexkit::sim::RecordInstall& r) {
  sub.add_option("--plugin-dir", r.plugin_dir, "kubelet's volume plugin dir")->required();
  sub.add_option("--driver", r.driver_dir, "the driver's folder, vendor~driver")->required();
}

CLI::App* AddRecordInstallCommand(CLI::App& record, flexkit::sim::RecordInstall& r) {
  r.shim = SelfDir() + "/flexsim-record-shim";
  auto* install = record.add_subcommand(
      "install", "link the driver to .<name>.real and rename the shim over its name (atomic)");
  AddDriverFolderOptions(*install, r);
  install->add_option("--log", r.log,
                      "where the shim appends its JSON lines (absolute; default "
                      "/var/log/flexsim-record/<vendor~driver>.jsonl)");
  install->add_option("--shim", r.shim, "the shim binary")->capture_default_str();
  return install;
}

CLI::App* AddRecordUninstallCommand(CLI::App& record, flexkit::sim::RecordInstall& r) {
  auto* uninstall = record.add_subcommand("uninstall", "rename .<name>.real back over the shim");
  AddDriverFolderOptions(*uninstall, r);
  return uninstall;
}

CLI::App* AddCheckShapesCommand(CLI::App& app, CheckShapesRequest& r) {
  auto* shapes = app.add_subcommand(
      "check-shapes",
      "report every recorded call that flexsim would never make, or would make differently, "
      "for that kubelet version (exit 1 when there is one)");
  shapes->add_option("log", r.log, "a flexsim-record-shim log")->required();
  shapes->add_option("--profile", r.profile, "the recorded kubelet's version profile")
      ->capture_default_str();
  shapes->add_option("--driver-name", r.driver_name,
                     "vendor/driver (default: read from the recorded paths)");
  return shapes;
}

// The parsed command line, or the exit code when parsing ends the program
// (--help, --version: 0; a usage error: 2, CLI11 having said why).
std::optional<int> ParseRequest(int argc, char** argv, Request& r) {
  CLI::App app{"flexsim: kubelet and attach/detach controller emulator for FlexVolume drivers"};
  app.set_version_flag("--version", std::string("flexsim ") + FLEXKIT_VERSION);
  app.footer(
      "Exit codes: 0 success (judge: whatever the verdict; call: the kubelet operation\n"
      "succeeded; run, apply: every step passed, every reply was usable and nothing was\n"
      "left bound; check-shapes: no gap), 1 the operation, a step or a shape failed,\n"
      "2 usage or I/O error, 3 call: the harness had to stop the driver (it would hang\n"
      "kubelet, or its output passed the cap).");
  app.require_subcommand(1);
  auto* judge = AddJudgeCommand(app, r.judge);
  auto* call = AddCallCommand(app, r.call);
  auto* run = AddRunCommand(app, r.nodes);
  auto* apply = AddApplyCommand(app, r.nodes);
  auto* record = app.add_subcommand(
      "record",
      "record a real cluster's driver calls: put flexsim-record-shim in place of a driver "
      "(install) or take it out again (uninstall)");
  record->require_subcommand(1);
  auto* record_install = AddRecordInstallCommand(*record, r.record);
  auto* record_uninstall = AddRecordUninstallCommand(*record, r.record);
  auto* shapes = AddCheckShapesCommand(app, r.shapes);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const std::pair<CLI::App*, Mode> modes[] = {{judge, Mode::kJudge},
                                              {call, Mode::kCall},
                                              {run, Mode::kRun},
                                              {apply, Mode::kApply},
                                              {record_install, Mode::kRecordInstall},
                                              {record_uninstall, Mode::kRecordUninstall},
                                              {shapes, Mode::kCheckShapes}};
  for (const auto& [sub, mode] : modes)
    if (sub->parsed()) r.mode = mode;
  return std::nullopt;
}

int RunCall(CallRequest& r) {
  auto& cc = r.command;
  cc.volume.options = KeyValues(r.options, "--option");
  cc.pod.secret = KeyValues(r.secrets, "--secret");
  cc.env = KeyValues(r.env, "--env");
  cc.volume.inline_volume = !r.pv;
  if (r.fs_group >= 0) cc.pod.fs_group = r.fs_group;
  cc.settings.harness_deadline = Seconds(r.timeout);
  cc.settings.waitforattach_timeout = Seconds(r.waitforattach_timeout);
  return flexkit::sim::RunCallCommand(cc);
}

int RunOnNodes(const NodesRequest& r, Mode mode) {
  if (::geteuid() != 0) throw std::runtime_error("needs root: nodes are mount namespaces");
  RunDir dir(r.run_dir);
  flexkit::sim::ScenarioOptions scenario_options;
  scenario_options.driver = r.driver;
  scenario_options.driver_name = r.driver_name;
  scenario_options.run_dir = dir.path();
  scenario_options.transcript = r.transcript;
  if (!r.quiet) scenario_options.log = [](const std::string& line) { std::cerr << line << "\n"; };
  if (mode == Mode::kRun) return Report(flexkit::sim::RunScenario(r.scenario, scenario_options));
  return Report(flexkit::sim::ApplyManifest(r.manifest, r.driver, scenario_options));
}

int RunRecordInstall(const flexkit::sim::RecordInstall& r) {
  flexkit::sim::InstallRecorder(r);
  std::cout << "flexsim record: " << r.plugin_dir << "/" << r.driver_dir
            << " now runs through flexsim-record-shim\n";
  return 0;
}

int RunRecordUninstall(const flexkit::sim::RecordInstall& r) {
  flexkit::sim::UninstallRecorder(r.plugin_dir, r.driver_dir);
  std::cout << "flexsim record: " << r.plugin_dir << "/" << r.driver_dir
            << " runs the driver directly again\n";
  return 0;
}

int Run(Request& r) {
  switch (r.mode) {
    case Mode::kJudge:
      return RunJudge(r.judge.verb, r.judge.exit_code, r.judge.output_file, r.judge.strict);
    case Mode::kCall:
      return RunCall(r.call);
    case Mode::kRun:
    case Mode::kApply:
      return RunOnNodes(r.nodes, r.mode);
    case Mode::kRecordInstall:
      return RunRecordInstall(r.record);
    case Mode::kRecordUninstall:
      return RunRecordUninstall(r.record);
    case Mode::kCheckShapes:
      return RunCheckShapes(r.shapes.log, r.shapes.profile, r.shapes.driver_name);
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Request request;
  if (auto exit_code = ParseRequest(argc, argv, request)) return *exit_code;
  try {
    return Run(request);
  } catch (const std::exception& e) {
    std::cerr << "flexsim: " << e.what() << "\n";
    return 2;
  }
}
