#pragma once
// What a case must leave as it found it (DESIGN §3, anchors F26): mounts
// and regular files in each node's namespace and kubelet dirs, processes
// in the node's namespace, and on the host: mounts and loop devices that
// refer to the run dir, and processes descended from flexconform. Only
// things under the run dir count on the host, so other users of the
// machine never make a case fail.
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "simulator/mount_table.h"
#include "simulator/node.h"

namespace flexkit::conform {

struct HostSnapshot {
  std::vector<sim::MountEntry> mounts;  // in flexconform's namespace, under the run dir
  std::set<std::string> loop_devices;   // "loop7 -> backing file", under the run dir, even deleted
  std::set<pid_t> descendants;          // processes descended from flexconform
};
HostSnapshot TakeHostSnapshot(const std::string& run_dir);

struct NodeSnapshot {
  std::vector<sim::MountEntry> mounts;  // the node namespace's mount table
  std::set<std::string> files;  // regular files under the node's kubelet root and plugin dir
};
NodeSnapshot TakeNodeSnapshot(const sim::Node& node);

// "what leaked" lines; empty when nothing did.
std::vector<std::string> CompareHost(const HostSnapshot& before, const HostSnapshot& after);
std::vector<std::string> CompareNode(const sim::Node& node, const NodeSnapshot& before,
                                     const NodeSnapshot& after,
                                     const std::set<pid_t>& fixture_pids);

// Loop devices whose backing file is under `dir` (the sweep of a killed run).
std::vector<std::string> LoopDevicesUnder(const std::string& dir);

}  // namespace flexkit::conform
