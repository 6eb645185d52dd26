#include "conformance/leak_audit.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace flexkit::conform {
namespace {

bool Under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// The kernel names a backing file by its resolved path, so `dir` is
// resolved too (a symlinked or doubled-slash TMPDIR would match nothing).
std::string Resolved(const std::string& dir) {
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir : resolved.string();
}

// A backing file removed since (its case dir is gone) keeps its old path
// with " (deleted)" after it: still ours, and still a leak.
bool BackedUnder(std::string backing, const std::string& dir) {
  const std::string deleted = " (deleted)";
  if (backing.size() > deleted.size() &&
      backing.compare(backing.size() - deleted.size(), deleted.size(), deleted) == 0)
    backing.resize(backing.size() - deleted.size());
  return Under(backing, dir);
}

std::map<std::string, std::string> LoopBackingFiles() {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/block", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("loop", 0) != 0) continue;
    std::ifstream in(e.path() / "loop" / "backing_file");
    std::string backing;
    if (in && std::getline(in, backing)) out[name] = backing;
  }
  return out;
}

std::set<pid_t> Descendants(pid_t root) {
  std::map<pid_t, pid_t> parent;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (state != 'Z') parent[std::stoi(name)] = ppid;
  }
  std::set<pid_t> out;
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& [pid, ppid] : parent) {
      if ((ppid == root || out.count(ppid)) && !out.count(pid)) grew = out.insert(pid).second;
    }
  }
  return out;
}

void ListFiles(const std::string& dir, std::set<std::string>& out) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory(ec)) out.insert(it->path().string());
  }
}

}  // namespace

std::vector<std::string> LoopDevicesUnder(const std::string& dir) {
  std::vector<std::string> out;
  const std::string resolved = Resolved(dir);
  for (const auto& [name, backing] : LoopBackingFiles()) {
    if (BackedUnder(backing, resolved)) out.push_back("/dev/" + name);
  }
  return out;
}

HostSnapshot TakeHostSnapshot(const std::string& run_dir) {
  HostSnapshot s;
  for (const auto& m : sim::ReadMountTable(::getpid())) {
    if (Under(m.target, run_dir) || Under(m.source, run_dir)) s.mounts.push_back(m);
  }
  const std::string resolved = Resolved(run_dir);
  for (const auto& [name, backing] : LoopBackingFiles()) {
    if (BackedUnder(backing, resolved)) s.loop_devices.insert(name + " -> " + backing);
  }
  s.descendants = Descendants(::getpid());
  return s;
}

NodeSnapshot TakeNodeSnapshot(const sim::Node& node) {
  NodeSnapshot s;
  if (node.running()) s.mounts = sim::ReadMountTable(node.holder_pid());
  ListFiles(node.kubelet_root(), s.files);
  ListFiles(node.plugin_dir(), s.files);
  return s;
}

std::vector<std::string> CompareHost(const HostSnapshot& before, const HostSnapshot& after) {
  std::vector<std::string> leaks;
  for (const auto& m : sim::MountsAdded(before.mounts, after.mounts)) {
    leaks.push_back("host mount left: " + m.source + " on " + m.target + " (" + m.fs_type + ")");
  }
  for (const auto& l : after.loop_devices) {
    if (!before.loop_devices.count(l)) leaks.push_back("loop device left: " + l);
  }
  for (pid_t p : after.descendants) {
    if (before.descendants.count(p)) continue;
    std::ifstream in("/proc/" + std::to_string(p) + "/cmdline");
    std::string cmd;
    std::getline(in, cmd, '\0');
    leaks.push_back("process left: pid " + std::to_string(p) + " " + cmd);
  }
  return leaks;
}

std::vector<std::string> CompareNode(const sim::Node& node, const NodeSnapshot& before,
                                     const NodeSnapshot& after,
                                     const std::set<pid_t>& fixture_pids) {
  std::vector<std::string> leaks;
  for (const auto& m : sim::MountsAdded(before.mounts, after.mounts)) {
    leaks.push_back(node.name() + ": mount left: " + m.source + " on " + m.target + " (" +
                    m.fs_type + ")");
  }
  for (const auto& f : after.files) {
    if (!before.files.count(f)) leaks.push_back(node.name() + ": file left: " + f);
  }
  for (pid_t p : node.ProcessesInNamespace()) {
    if (fixture_pids.count(p)) continue;
    std::ifstream in("/proc/" + std::to_string(p) + "/cmdline");
    std::string cmd;
    std::getline(in, cmd, '\0');
    // The fixture's daemons run under nsenter: their children are theirs.
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    pid_t ppid = 0;
    if (close != std::string::npos) {
      std::istringstream rest(line.substr(close + 2));
      char state = 0;
      rest >> state >> ppid;
    }
    if (fixture_pids.count(ppid)) continue;
    leaks.push_back(node.name() + ": process left in the namespace: pid " + std::to_string(p) +
                    " " + cmd);
  }
  return leaks;
}

}  // namespace flexkit::conform
