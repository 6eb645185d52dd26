#pragma once
// Recording what a real cluster sends its drivers (`flexsim record`):
// installing flexsim-record-shim in place of a driver and removing it
// again, each step atomic for kubelet's prober, and reading the JSON-lines
// log the shim writes (one record per call).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace flexkit::sim {

struct RecordInstall {
  std::string plugin_dir;  // kubelet's --volume-plugin-dir
  std::string driver_dir;  // "vendor~driver", a folder under plugin_dir
  std::string shim;        // the flexsim-record-shim binary
  std::string log;         // where the shim appends; empty: its default
};

// Puts the shim at <plugin_dir>/<driver_dir>/<driver>: the driver is hard
// linked to `.<driver>.real` first and the shim renamed over the watched
// name, so at no moment is the executable missing or half-written (the
// prober ignores dot-names). Throws std::runtime_error saying what failed;
// on failure nothing is left changed.
void InstallRecorder(const RecordInstall& install);
// Puts the real driver back under its name (one rename) and removes the
// shim's files. Throws when the recorder is not installed there.
void UninstallRecorder(const std::string& plugin_dir, const std::string& driver_dir);

struct RecordedCall {
  int line = 0;  // in the log, from 1
  std::string time;
  std::string verb;
  std::vector<std::string> args;  // argv[1..], secrets replaced
  nlohmann::json options;         // the options JSON, or null
  int exit_code = 0;              // -1 when killed
  int signal = 0;
  std::string output;  // combined stdout+stderr, secrets replaced
  double duration_ms = 0;
};

// Reads a shim log. Throws "PATH:LINE: why" on a line that is not a record.
std::vector<RecordedCall> ReadRecording(const std::string& path);

// The kubelet root dir a recorded path lives under: what precedes
// "/pods/" (a pod volume dir) or "/plugins/kubernetes.io/flexvolume/" (a
// device mount path); "" for any other path.
std::string KubeletRootOf(const std::string& path);

// The marker the shim writes in place of a secret value.
inline constexpr const char* kRecordedSecret = "flexsim-redacted";

}  // namespace flexkit::sim
