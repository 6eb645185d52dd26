#include "simulator/call_command.h"

#include <stdlib.h>
#include <sys/mount.h>
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
  // kubelet would never run it (the prober lists only what is there): a
  // usage error, not a driver's exit 127 to judge.
  if (::access(c.driver.c_str(), X_OK) != 0)
    throw std::runtime_error("flexsim call: driver " + c.driver + " not found or not executable");
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
  NodeFilesystem& m = node.filesystem();
  KubeletPaths paths(node.kubelet_root(), c.volume.driver);
  ArgvBuilder argv(profile);
  Redactor redactor;
  for (const auto& [key, value] : c.pod.secret) redactor.AddSecret(key, value);
  for (const auto& note : redactor.ShortSecretNotes()) {
    transcript.AddEvent("secret too short to redact safely", {{"note", note}});
  }

  const std::string json = OptionsJson(profile, c.volume, nullptr);
  const std::string pod_uid = c.pod.pod_uid.empty() ? "pod-uid-1" : c.pod.pod_uid;
  if (c.pod.pod_uid.empty()) c.pod.pod_uid = pod_uid;
  const std::string pod_dir = paths.PodVolumeDir(pod_uid, c.volume.name);
  const std::string global = paths.DeviceMountPath(c.volume.name);

  // What kubelet does around the verb, in order: every driver call it makes
  // (the verb and those the plugin makes for it), its own mounts and
  // directory removals, and the error the operation ends with.
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  std::string error;
  std::string skipped;
  bool harness = false;
  auto step = [&](const std::string& what) { steps.push_back(redactor.Apply(what)); };
  auto fail = [&](const std::string& why) {
    if (error.empty()) error = redactor.Apply(why);
  };
  auto run = [&](const Args& args) {
    CallResult r = invoker.Call(node, "cli", c.driver, args, redactor);
    step(args[0] + ": " + OutcomeName(r.verdict.outcome));
    if (!r.harness_problem.empty()) harness = true;
    return r;
  };
  // The verb's own call: its failure is the operation's error.
  auto run_verb = [&](const Args& args) {
    CallResult r = run(args);
    if (!r.ok() && !r.not_supported()) fail(r.verdict.error);
    return r;
  };
  auto skip = [&](const std::string& reason) {
    skipped = reason;
    transcript.AddEvent("skipped", {{"verb", c.verb}, {"reason", reason}});
    step("skipped " + c.verb + ": " + reason);
  };
  auto remove_dir = [&](const std::string& path) {
    try {
      m.RemoveDir(path);
      step("removed " + path);
    } catch (const std::exception& e) {
      fail(e.what());
    }
  };
  auto mount = [&](const std::string& source, const std::string& target, unsigned long flags) {
    try {
      m.Mount(source, target, "", flags, "");
      step("mounted " + source + " on " + target + ((flags & MS_BIND) != 0 ? " (bind)" : ""));
      return true;
    } catch (const std::exception& e) {
      fail(e.what());
      return false;
    }
  };
  // plugin.go getDeviceMountPath: GetVolumeName (options without pod keys)
  // names <plugins>/kubernetes.io/flexvolume/<driver>/mounts/<spec.Name()>.
  auto get_device_mount_path = [&] {
    CallResult g = run(argv.GetVolumeName(json));
    if (g.ok() || g.not_supported()) return true;
    fail("GetVolumeName failed from getDeviceMountPath: " + g.verdict.error);
    return false;
  };
  // util.go prepareForMount: mkdir -p 0750; "mount only once".
  auto prepare_for_mount = [&](const std::string& dir) {
    if (m.PathExists(dir) && m.IsMountPoint(dir)) {
      skip(dir + " is already a mount point (kubelet does not call the driver)");
      return false;
    }
    m.MakeDirs(dir, 0750);
    return true;
  };

  const std::string& v = c.verb;
  if (v == "init") {
    RequireArgs(c, 0, 0, "(none)");
    run_verb(argv.Init());
  } else if (v == "getvolumename") {
    RequireArgs(c, 0, 0, "(none)");
    run_verb(argv.GetVolumeName(json));
  } else if (v == "attach") {
    RequireArgs(c, 0, 0, "(none; the node is --node)");
    run_verb(argv.Attach(json, c.node));
  } else if (v == "waitforattach") {
    RequireArgs(c, 0, 1, "[DEVICE]");
    run_verb(argv.WaitForAttach(Arg(c, 0, ""), json));
  } else if (v == "isattached") {
    RequireArgs(c, 0, 0, "(none)");
    run_verb(argv.IsAttached(json, c.node));
  } else if (v == "mountdevice") {
    // attacher.go MountDevice.
    RequireArgs(c, 0, 2, "[DEVICE [DIR]]");
    const std::string dir = Arg(c, 1, global);
    const std::string device = Arg(c, 0, "");
    if (prepare_for_mount(dir)) {
      CallResult r = run_verb(argv.MountDevice(dir, device, json));
      if (r.not_supported() && !device.empty()) {
        step("kubelet would format and mount " + device + " on " + dir +
             " itself (attacher-defaults.go MountDevice; not done by flexsim call)");
      }
    }
  } else if (v == "mount") {
    // mounter.go SetUpAt.
    RequireArgs(c, 0, 2, "[DIR [LEGACY-DEVICE]]");
    const std::string dir = Arg(c, 0, pod_dir);
    if (prepare_for_mount(dir)) {
      CallResult r = run_verb(argv.Mount(dir, OptionsJson(profile, c.volume, &c.pod), ""));
      // mounter-defaults.go SetUpAt: bind the device mount path.
      if (r.not_supported() && get_device_mount_path()) mount(global, dir, MS_BIND);
      if (!error.empty() && m.PathExists(dir) && !m.IsMountPoint(dir)) remove_dir(dir);
    }
  } else if (v == "unmount") {
    // unmounter.go TearDownAt.
    RequireArgs(c, 0, 1, "[DIR]");
    const std::string dir = Arg(c, 0, pod_dir);
    if (!m.PathExists(dir)) {
      skip("Unmount skipped because path does not exist: " + dir);
    } else {
      CallResult r = run_verb(argv.Unmount(dir));
      if (r.not_supported() && m.IsMountPoint(dir)) {
        // unmounter-defaults.go TearDownAt: mount-utils CleanupMountPoint.
        try {
          m.Unmount(dir);
          step("unmounted " + dir);
        } catch (const std::exception& e) {
          fail(e.what());
        }
      }
      // The driver may have removed the directory; kubelet tolerates that.
      if (error.empty() && m.PathExists(dir)) remove_dir(dir);
    }
  } else if (v == "unmountdevice") {
    // detacher.go UnmountDevice.
    RequireArgs(c, 0, 1, "[DIR]");
    const std::string dir = Arg(c, 0, global);
    if (!m.PathExists(dir)) {
      skip("Unmount skipped because path does not exist: " + dir);
    } else {
      if (!m.IsMountPoint(dir)) {
        skip("Path: " + dir + " already unmounted");
      } else {
        CallResult r = run_verb(argv.UnmountDevice(dir));
        if (r.not_supported()) {
          // detacher-defaults.go UnmountDevice: util.UnmountPath.
          try {
            m.Unmount(dir);
            step("unmounted " + dir);
          } catch (const std::exception& e) {
            fail(e.what());
          }
        }
      }
      if (error.empty() && m.PathExists(dir)) remove_dir(dir);
    }
  } else if (v == "detach") {
    RequireArgs(c, 0, 1, "[VOLUME-NAME]");
    run_verb(argv.Detach(Arg(c, 0, c.volume.name), c.node));
  } else if (v == "expandvolume") {
    // expander.go ExpandVolumeDevice: getDeviceMountPath before the call.
    RequireArgs(c, 2, 3, "NEW-BYTES OLD-BYTES [DIR]");
    Args args = argv.ExpandVolume(json, Arg(c, 2, global), c.args[0], c.args[1]);
    if (get_device_mount_path()) run_verb(args);
  } else if (v == "expandfs") {
    // expander.go NodeExpand: only for a PersistentVolume.
    RequireArgs(c, 2, 4, "NEW-BYTES OLD-BYTES [DEVICE [DIR]]");
    Args args = argv.ExpandFs(json, Arg(c, 2, ""), Arg(c, 3, pod_dir), c.args[0], c.args[1]);
    if (c.volume.inline_volume) {
      skip("inline volume: kubelet never sends expandfs for it");
      fail("PersistentVolume not found for spec: " + c.volume.name);
    } else {
      run_verb(args);
    }
  } else {
    Args args = {v};  // any other verb verbatim, to see how the driver answers it
    args.insert(args.end(), c.args.begin(), c.args.end());
    run_verb(args);
  }

  nlohmann::ordered_json out;
  nlohmann::ordered_json other_calls = nlohmann::ordered_json::array();
  for (const auto& record : transcript.Calls()) {
    auto j = CallRecordToJson(record);
    if (!c.strict) j["verdict"].erase("warnings");
    if (record.verb == v && out.is_null()) {
      out = std::move(j);
    } else {
      other_calls.push_back(std::move(j));
    }
  }
  if (out.is_null()) out = {{"skipped", skipped}};
  out["other_calls"] = std::move(other_calls);
  out["kubelet_steps"] = std::move(steps);
  out["error"] = error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(error);
  if (!redactor.ShortSecretNotes().empty()) out["redaction_notes"] = redactor.ShortSecretNotes();
  const int rc = harness ? 3 : error.empty() ? 0 : 1;
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (!c.transcript.empty()) transcript.WriteTo(c.transcript);
  return rc;
}

}  // namespace flexkit::sim
