#include "simulator/call_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "simulator/boost_process_runner.h"
#include "simulator/kubelet_paths.h"
#include "simulator/options_builder.h"

namespace flexkit::sim {
namespace {

// Removes a temporary run dir on every exit path.
struct RunDir {
  std::string path;
  bool temporary = false;
  ~RunDir() {
    if (temporary) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
};

void RequireArgs(const CallCommand& c, std::size_t min, std::size_t max, const char* usage) {
  if (c.args.size() < min || c.args.size() > max) {
    throw std::invalid_argument("flexsim call " + c.verb + ": expected arguments " + usage);
  }
}

std::string Arg(const CallCommand& c, std::size_t i, const std::string& fallback) {
  return i < c.args.size() ? c.args[i] : fallback;
}

}  // namespace

std::string DriverNameFromPath(const std::string& executable) {
  std::string dir = std::filesystem::path(executable).parent_path().filename().string();
  for (auto& ch : dir) {
    if (ch == '~') ch = '/';
  }
  return dir;
}

int RunCallCommand(CallCommand c) {
  const VersionProfile& profile = FindProfile(c.profile);
  if (::geteuid() != 0) {
    throw std::runtime_error("flexsim call: needs root to create the node's mount namespace");
  }
  c.driver = std::filesystem::absolute(c.driver).lexically_normal().string();
  if (c.volume.driver.empty()) c.volume.driver = DriverNameFromPath(c.driver);

  RunDir run_dir{c.run_dir, false};
  if (run_dir.path.empty()) {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/flexsim-call-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("flexsim call: create run dir " + pattern + ": mkdtemp failed");
    }
    run_dir = {pattern, true};
  }

  Transcript transcript;
  BoostProcessRunner runner;
  DriverInvoker invoker(runner, transcript, c.settings);
  Node node(c.node, run_dir.path, c.env);
  KubeletPaths paths(node.kubelet_root(), c.volume.driver);
  ArgvBuilder argv(profile);
  Redactor redactor;
  for (const auto& [key, value] : c.pod.secret) redactor.AddSecret(value);

  const std::string json = OptionsJson(profile, c.volume, nullptr);
  const std::string pod_uid = c.pod.pod_uid.empty() ? "pod-uid-1" : c.pod.pod_uid;
  if (c.pod.pod_uid.empty()) c.pod.pod_uid = pod_uid;
  const std::string pod_dir = paths.PodVolumeDir(pod_uid, c.volume.name);
  const std::string global = paths.DeviceMountPath(c.volume.name);

  Args args;
  std::string prepare;  // kubelet's prepareForMount target, if any
  const std::string& v = c.verb;
  if (v == "init") {
    RequireArgs(c, 0, 0, "(none)");
    args = argv.Init();
  } else if (v == "getvolumename") {
    RequireArgs(c, 0, 0, "(none)");
    args = argv.GetVolumeName(json);
  } else if (v == "attach") {
    RequireArgs(c, 0, 0, "(none; the node is --node)");
    args = argv.Attach(json, c.node);
  } else if (v == "waitforattach") {
    RequireArgs(c, 0, 1, "[DEVICE]");
    args = argv.WaitForAttach(Arg(c, 0, ""), json);
  } else if (v == "isattached") {
    RequireArgs(c, 0, 0, "(none)");
    args = argv.IsAttached(json, c.node);
  } else if (v == "mountdevice") {
    RequireArgs(c, 0, 2, "[DEVICE [DIR]]");
    prepare = Arg(c, 1, global);
    args = argv.MountDevice(prepare, Arg(c, 0, ""), json);
  } else if (v == "mount") {
    RequireArgs(c, 0, 2, "[DIR [LEGACY-DEVICE]]");
    prepare = Arg(c, 0, pod_dir);
    args = argv.Mount(prepare, OptionsJson(profile, c.volume, &c.pod), Arg(c, 1, ""));
  } else if (v == "unmount") {
    RequireArgs(c, 0, 1, "[DIR]");
    args = argv.Unmount(Arg(c, 0, pod_dir));
  } else if (v == "unmountdevice") {
    RequireArgs(c, 0, 1, "[DIR]");
    args = argv.UnmountDevice(Arg(c, 0, global));
  } else if (v == "detach") {
    RequireArgs(c, 0, 1, "[VOLUME-NAME]");
    args = argv.Detach(Arg(c, 0, c.volume.name), c.node);
  } else if (v == "expandvolume") {
    RequireArgs(c, 2, 3, "NEW-BYTES OLD-BYTES [DIR]");
    args = argv.ExpandVolume(json, Arg(c, 2, global), c.args[0], c.args[1]);
  } else if (v == "expandfs") {
    RequireArgs(c, 2, 4, "NEW-BYTES OLD-BYTES [DEVICE [DIR]]");
    args = argv.ExpandFs(json, Arg(c, 2, ""), Arg(c, 3, pod_dir), c.args[0], c.args[1]);
  } else {
    args = {v};  // any other verb verbatim, to see how the driver answers it
    args.insert(args.end(), c.args.begin(), c.args.end());
  }

  int rc = 0;
  nlohmann::ordered_json out;
  if (!prepare.empty() && node.mounter().PathExists(prepare) &&
      node.mounter().IsMountPoint(prepare)) {
    transcript.AddEvent("skipped",
                        {{"verb", v}, {"reason", prepare + " is already a mount point"}});
    out = {{"skipped", prepare + " is already a mount point (kubelet does not call the driver)"}};
  } else {
    if (!prepare.empty()) node.mounter().MakeDirs(prepare, 0750);
    CallResult result = invoker.Call(node, "cli", c.driver, args, redactor);
    out = CallRecordToJson(transcript.Calls().back());
    if (!c.strict) out["verdict"].erase("warnings");
    if (!result.harness_problem.empty()) {
      rc = 3;
    } else if (!result.ok() && !result.not_supported()) {
      rc = 1;
    }
  }
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (!c.transcript.empty()) transcript.WriteTo(c.transcript);
  return rc;
}

}  // namespace flexkit::sim
