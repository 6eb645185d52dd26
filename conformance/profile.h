#pragma once
// A driver profile: what the suite needs to know about a driver under test
// (DESIGN §7). Loaded from YAML with every unknown key refused
// (naming its line), or derived from the driver's own `init` reply.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/driver_status.h"

namespace flexkit::conform {

using Millis = std::chrono::milliseconds;

// The backend a driver needs: nothing, the fake Convoy/EBS (a cloud plus
// one daemon per node, inside that node's namespace), or commands run
// before and after each case (with FLEXCONFORM_CASE_DIR set).
struct FixtureSpec {
  std::string kind = "none";    // "none", "convoy-fake" or "command"
  std::string setup;            // kind "command": sh -c, before each case
  std::string teardown;         // kind "command": sh -c, after each case
  std::string convoy_fake;      // kind "convoy-fake": the binary; empty = next to flexconform
  std::string mode = "attach";  // convoy-flexvolume's mode: "attach" or "mount"
  // kind "convoy-fake": the Convoy its daemons play (--api stock | extended;
  // profile key fixture.api)
  std::string api = "extended";
  // kind "command": per-node hooks (sh -c, "{{node}}", "{{nodes}}" and
  // "{{case_dir}}" substituted), by name: nodeStart, nodeStop (in the node's
  // namespace), crash, restart, partition, heal, attachments (prints
  // {"<volume>": ["<node>", ...]}). Absent: the cases needing one SKIP.
  std::map<std::string, std::string> hooks;
  Millis hook_timeout{std::chrono::seconds(30)};  // setup, teardown and each hook
};

// The hook names a command fixture may define, in the order documented.
const std::vector<std::string>& FixtureHookNames();
// Whether the fixture can do what hook `name` does: convoy-fake does all
// of them itself, a command fixture those it defines, none nothing.
bool FixtureHas(const FixtureSpec& spec, const std::string& name);

struct DriverProfile {
  std::string driver;       // path of the driver executable
  std::string driver_name;  // "vendor/driver"; empty = from the folder name
  // Expected init capabilities; nullopt = whatever init says is taken.
  std::optional<sim::DriverCapabilities> capabilities;
  bool kubelet_managed_attach = false;  // attach by kubelet instead of the controller
  // PATH of controller-side calls (attach, detach, isattached); empty: an
  // empty directory, as a distroless kube-controller-manager has.
  std::string control_plane_path;
  std::string kubernetes = "current";  // simulator version profile
  // Options of the test volume; "{{unique}}" becomes a name unique per case.
  std::map<std::string, std::string> volume_options;
  std::vector<std::string> fs_types;  // tried by the [fstype] cases
  // Options the backend must refuse (e.g. {size: "-1"}), merged over
  // volume_options by [failure]/invalid-option-refused; empty = SKIP.
  std::map<std::string, std::string> invalid_options;
  // Option keys whose values are free text to the driver (a share, a user
  // name): [robustness] puts hostile values into them.
  std::vector<std::string> free_text_options;
  std::map<std::string, std::string> secrets;  // raw values, sent base64 by mount
  int nodes = 1;
  // maxJobs: at most this many cases at once, whatever -j says (0: no
  // limit), for a backend its cases cannot share at once (one device node,
  // one mock server, one share that every case's setup resets).
  int max_jobs = 0;
  // Per-node environment; "{{node}}" and "{{case_dir}}" are substituted.
  std::map<std::string, std::string> node_env;
  bool needs_root = true;                            // mounts in node namespaces need CAP_SYS_ADMIN
  Millis default_timeout{std::chrono::seconds(30)};  // harness deadline per call
  std::map<std::string, Millis> verb_timeouts;       // per verb, overriding it
  std::map<std::string, std::string> skip;           // case name -> reason
  // The driver's own installer, argv with "{{driver}}" (a copy of the
  // executable) and "{{plugin_dir}}" substituted; empty when it has none.
  std::vector<std::string> install;
  FixtureSpec fixture;
  // What a volume's data does across nodes (mount-only failover): "shared"
  // (written on A, seen on B: NFS, a cloud disk), "node-local" (stays on
  // its node), "ephemeral" (fresh on every mount); empty: not said, so the
  // cross-node data check SKIPs.
  std::string storage;
  // accessMode: ReadWriteMany says the backend is storage several nodes
  // may attach and mount at once (NFS, a shared directory): [failover] then
  // lets a volume be attached to several nodes that may have it, and still
  // checks its data and that a node's teardown touches no other node's.
  // Default (ReadWriteOnce): one node at a time (F14).
  bool read_write_many = false;
  // podVolume: directory: mount fills the pod dir itself and mounts
  // nothing there, as kubelet's own gitRepo volume does (kubelet never
  // looks for a mount after mount's Success). The pod dir being there is
  // then the volume set up, and what it holds is the volume's, for unmount
  // to remove. Default (podVolume: mount): mount leaves a mount there.
  bool pod_volume_is_directory = false;
  // liveNode.scratch: the run is on a real node (the Sonobuoy plugin), so
  // only the cases tagged live-node run and the run dirs go under this
  // path; empty: not a live node. Then `driver` may come from --driver.
  std::string live_node_scratch;

  Millis TimeoutFor(const std::string& verb) const;
  bool attachable() const { return capabilities && capabilities->attach; }
};

// Parses a profile; relative paths are resolved against the file's folder.
// Throws std::runtime_error "PATH:LINE: why" for: a key unknown where it
// stands (naming the nearest known one), a skip: name no case has (naming
// the nearest case), a kubernetes: kubelet the suite does not run, a value
// of the wrong type (the type expected and the value given), a bad value.
DriverProfile LoadProfile(const std::string& path);
DriverProfile ParseProfile(const std::string& yaml_text, const std::string& origin,
                           const std::string& base_dir);

// What a run grades, as the command line says it: a profile file (its
// driver replaced by `driver` when both are given), a driver alone (the
// rest derived: kubelet's controller-managed attach, two nodes, the
// capabilities from init, which the caller asks), or the bundled
// convoy-flexvolume on the fake Convoy's extended or stock API.
struct ProfileChoice {
  std::string profile_path;
  std::string driver;
  std::string bundled = "extended";  // "extended" or "stock"
  std::string timeout;               // every call's deadline, "" for the profile's
  std::string flexconform_dir;       // where the bundled driver and convoy-fake live
};
// The profile with the driver's path absolute and its plugin name derived
// from its folder when the profile names none. Throws std::runtime_error
// for an invalid profile file or timeout, and when the driver is not an
// executable file.
DriverProfile ResolveProfile(const ProfileChoice& choice);

// Every verb kubelet and the controller call, as the timeouts: key names them.
const std::vector<std::string>& KubeletVerbs();

// "1.5s", "200ms", "2m", "30" (seconds). Throws std::invalid_argument.
Millis ParseDuration(const std::string& text);

}  // namespace flexkit::conform
