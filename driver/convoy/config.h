#pragma once
// convoy-flexvolume's configuration: /etc/convoy-flexvolume/config.json, or
// the file named by $CONVOY_FLEXVOLUME_CONFIG. Every key is optional and no
// file at the default path means all defaults (a file the variable names
// must exist: a typo there must not silently mean the defaults):
//
//   {
//     "socket": "/var/run/convoy/convoy.sock",       // this node's daemon
//     "nodeSockets": {"node-a": "/run/convoy/a.sock"}, // attach/detach/isattached per node
//     "socketTemplate": "/run/convoy/{node}.sock",     // ... or by template
//     "mode": "attach",                               // or "mount" (mount-only)
//     "timeouts": {"connect": "5s", "request": "2m", "waitforattach": "2m"},
//     "logFile": "",                                  // syslog; or a file
//     "stateDir": "/var/lib/convoy-flexvolume",
//     "api": "auto"                                   // or "stock" | "extended"
//   }
//
// `api` says which Convoy the daemons are: "stock" (v0.5.2 as released),
// "extended" (with the Kubernetes extensions FSType, ReadWrite, BindMount,
// ReMount and EBS take-over), or "auto": asked of each daemon once per
// daemon start (see DaemonApi in convoy_driver.h).
#include <chrono>
#include <map>
#include <string>

namespace convoy_flexvolume {

inline constexpr const char* kDefaultConfigPath = "/etc/convoy-flexvolume/config.json";
inline constexpr const char* kConfigEnv = "CONVOY_FLEXVOLUME_CONFIG";

enum class Mode { kAttach, kMountOnly };

enum class Api { kAuto, kStock, kExtended };

const char* ApiName(Api api);

struct Timeouts {
  std::chrono::milliseconds connect{5000};
  std::chrono::milliseconds request{120000};
  std::chrono::milliseconds wait_for_attach{120000};  // kubelet kills at 10 min
};

struct Config {
  std::string socket = "/var/run/convoy/convoy.sock";
  std::map<std::string, std::string> node_sockets;
  std::string socket_template;
  Mode mode = Mode::kAttach;
  Timeouts timeouts;
  std::string log_file;
  std::string state_dir = "/var/lib/convoy-flexvolume";
  Api api = Api::kAuto;

  // The daemon that serves `node`: nodeSockets, then socketTemplate, then
  // `socket`. Throws std::runtime_error when the node name cannot be put in
  // a path safely.
  std::string SocketForNode(const std::string& node) const;
};

// The config file in effect: the one $CONVOY_FLEXVOLUME_CONFIG names
// (`named`), else the default path.
struct ConfigLocation {
  std::string path;
  bool named = false;
};
ConfigLocation ConfigPath();

// Loads `path`; a missing file yields the defaults, unless `named` (then it
// is an error saying the named file is missing). An unreadable or invalid
// file throws std::runtime_error naming the file and the problem.
Config LoadConfig(const std::string& path, bool named = false);

// Parses the text of a config file (`path` only names it in errors); throws
// like LoadConfig. Invalid JSON is reported as "PATH:LINE:COLUMN: not valid
// JSON: <what was wrong>".
Config ParseConfig(const std::string& text, const std::string& path);

// "250ms", "5s", "2m" -> milliseconds.
bool ParseDuration(const std::string& text, std::chrono::milliseconds* out);

}  // namespace convoy_flexvolume
