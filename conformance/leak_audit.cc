#include "conformance/leak_audit.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

#include "conformance/background_process.h"
#include "platform/read_file.h"

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
    const std::string backing = platform::ReadFirstLine(e.path() / "loop" / "backing_file");
    if (!backing.empty()) out[name] = backing;
  }
  return out;
}

std::string LoopAttribute(const std::string& name, const std::string& attribute) {
  return platform::ReadFirstLine("/sys/block/" + name + "/loop/" + attribute);
}

// "" when the process is gone or a zombie.
std::string StartTime(pid_t pid) {
  auto stat = ReadProcStat(pid);
  return stat && stat->state != 'Z' ? stat->start_time : "";
}

bool HasEnvEntry(pid_t pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string e;
  while (std::getline(in, e, '\0')) {
    if (e == entry) return true;
  }
  return false;
}

// Runs a reclaiming tool found in the usual places; "" on success, else why.
std::string Tool(const std::vector<std::string>& argv) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string path = dir + argv.front();
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<std::string> full = argv;
    full.front() = path;
    const int rc = RunToCompletion(full, "/dev/null");
    return rc == 0 ? "" : path + " exit " + std::to_string(rc);
  }
  return argv.front() + " not found";
}

void ListFiles(const std::string& dir, std::set<std::string>& out) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory(ec)) out.insert(it->path().string());
  }
}

// Removes `path` and what it holds, unless a mount is at or under it (a
// mount the audit did not take as the case's is not the audit's to empty).
std::string RemoveUnlessMountedUnder(const std::string& path) {
  for (const auto& m : sim::ReadMountTable(::getpid())) {
    if (m.target == path || Under(m.target, path)) return "a mount is under it: " + m.target;
  }
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  return ec ? ec.message() : "";
}

// Entries of the scratch places and of their dirs, the run dir's subtree
// left out. A dir of thousands (a build cache) is listed no further than
// its first 4096 entries.
std::set<std::string> ScratchEntries(const std::string& run_dir) {
  std::set<std::string> out;
  auto list = [&](const std::string& dir, std::vector<std::string>* dirs) {
    std::error_code ec;
    std::size_t n = 0;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end && n < 4096;
         it.increment(ec), ++n) {
      const std::string path = it->path().string();
      // mount(8)'s own table (libmount's utab), made by the first mount of
      // a fresh machine, whoever calls it.
      if (path == run_dir || Under(path, run_dir) || path == "/run/mount") continue;
      out.insert(path);
      std::error_code type_ec;
      if (dirs && it->symlink_status(type_ec).type() == std::filesystem::file_type::directory)
        dirs->push_back(path);
    }
  };
  for (const auto& place : kScratchPlaces) {
    std::vector<std::string> dirs;
    list(place, &dirs);
    for (const auto& d : dirs) list(d, nullptr);
  }
  return out;
}

// The new entries, top-most only: an entry in a new dir goes with it.
std::vector<std::string> TopMostAdded(const std::set<std::string>& before,
                                      const std::set<std::string>& after) {
  std::vector<std::string> added;
  for (const auto& path : after) {
    if (before.count(path)) continue;
    const std::string parent = std::filesystem::path(path).parent_path().string();
    if (!before.count(parent) && after.count(parent)) continue;
    added.push_back(path);
  }
  return added;
}

// Whether `path` is one the profile's volume options name: a template's
// expansion ("/srv/{{unique}}.img") or a fixed path and what it holds.
bool BackendPath(const std::string& path, const std::vector<std::string>& templates) {
  const std::string hole = "{{unique}}";
  for (const auto& t : templates) {
    const auto at = t.find(hole);
    if (at == std::string::npos) {
      if (path == t || Under(path, t)) return true;
      continue;
    }
    const std::string head = t.substr(0, at), tail = t.substr(at + hole.size());
    const std::string tail_dir = tail.substr(0, tail.find('/'));  // "{{unique}}/data": its dir
    if (path.size() >= head.size() + tail_dir.size() && path.compare(0, head.size(), head) == 0 &&
        path.compare(path.size() - tail_dir.size(), tail_dir.size(), tail_dir) == 0 &&
        path.find('/', head.size()) == std::string::npos)
      return true;
  }
  return false;
}

// Whether the regular file at `path` (up to 1 MiB) holds one of `secrets`
// (or of any other marks).
bool HoldsASecret(const std::string& path, const std::vector<std::string>& secrets) {
  std::error_code ec;
  if (secrets.empty() ||
      !std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec)) ||
      std::filesystem::file_size(path, ec) > (1u << 20) || ec)
    return false;
  std::string text;
  try {
    text = platform::ReadWholeFile(path);
  } catch (const std::system_error&) {
    return false;  // gone meanwhile, or not ours to read
  }
  return std::any_of(secrets.begin(), secrets.end(), [&text](const std::string& s) {
    return !s.empty() && text.find(s) != std::string::npos;
  });
}

}  // namespace

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  // read(2), not a stream: the audit reads every process's stat twice per case.
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  const std::string_view line(buf, static_cast<std::size_t>(n));
  const auto close = line.rfind(')');  // the command name may hold ") "
  if (close == std::string_view::npos || close + 2 > line.size()) return std::nullopt;
  std::vector<std::string_view> fields;  // from field 3 (state) on
  std::string_view rest = line.substr(close + 2);
  while (!rest.empty() && fields.size() < 20) {
    const auto space = rest.find_first_of(" \n");
    if (space != 0) fields.push_back(rest.substr(0, space));
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  pid_t ppid = 0;
  if (fields.size() < 20 ||
      std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), ppid).ec !=
          std::errc())
    return std::nullopt;
  return ProcStat{fields[0][0], ppid, std::string(fields[19])};
}

std::string CommandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string all, part;
  while (std::getline(in, part, '\0')) {
    if (!part.empty() && part.front() == '{') part = "{...}";
    all += (all.empty() ? "" : " ") + part;
  }
  return all.size() > 200 ? all.substr(0, 200) + "..." : all;
}

namespace {

// Every process's stat, read in one pass over /proc.
std::map<pid_t, ProcStat> ProcessTable() {
  std::map<pid_t, ProcStat> table;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return table;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (auto stat = ReadProcStat(static_cast<pid_t>(pid))) table[static_cast<pid_t>(pid)] = *stat;
  }
  ::closedir(proc);
  return table;
}

std::set<pid_t> DescendantsIn(const std::map<pid_t, ProcStat>& table, pid_t root) {
  std::set<pid_t> out;
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& [pid, stat] : table) {
      if (stat.state == 'Z') continue;
      if ((stat.ppid == root || out.count(stat.ppid)) && !out.count(pid))
        grew = out.insert(pid).second;
    }
  }
  return out;
}

}  // namespace

std::set<pid_t> Descendants(pid_t root) { return DescendantsIn(ProcessTable(), root); }

std::vector<std::string> LoopDevicesUnder(const std::string& dir) {
  std::vector<std::string> out;
  const std::string resolved = Resolved(dir);
  for (const auto& [name, backing] : LoopBackingFiles()) {
    if (BackedUnder(backing, resolved)) out.push_back("/dev/" + name);
  }
  return out;
}

HostSnapshot TakeHostSnapshot(const std::string& run_dir, pid_t root) {
  HostSnapshot s;
  s.run_dir = Resolved(run_dir);
  // The harness's own namespace outlives every case: one watch for the run.
  static sim::MountTableWatch host_mounts(::getpid());
  s.mounts = *host_mounts.Current();
  s.loops = LoopBackingFiles();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/block", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("dm-", 0) == 0) {
      s.dm[name] = platform::ReadFirstLine(e.path() / "dm" / "name");
    } else if (name.rfind("nbd", 0) == 0) {
      const std::string pid = platform::ReadFirstLine(e.path() / "pid");  // only while connected
      if (!pid.empty()) s.nbd[name] = pid;
    }
  }
  const auto table = ProcessTable();
  for (const auto& [pid, stat] : table) {
    if (stat.state != 'Z') s.processes[pid] = stat.start_time;
  }
  s.descendants = DescendantsIn(table, root);
  s.scratch = ScratchEntries(s.run_dir);
  return s;
}

NodeSnapshot TakeNodeSnapshot(const sim::Node& node) {
  NodeSnapshot s;
  s.mounts = *node.Mounts();
  ListFiles(node.kubelet_root(), s.files);
  ListFiles(node.plugin_dir(), s.files);
  return s;
}

std::vector<std::string> ScratchEntriesAdded(const HostSnapshot& run_start, const HostSnapshot& now,
                                             const std::vector<std::string>& run_marks) {
  auto marked = [&run_marks](const std::string& path) {
    const std::string name = std::filesystem::path(path).filename().string();
    return std::any_of(
               run_marks.begin(), run_marks.end(),
               [&name](const std::string& m) { return name.find(m) != std::string::npos; }) ||
           HoldsASecret(path, run_marks);
  };
  std::vector<std::string> left;
  for (const auto& path : TopMostAdded(run_start.scratch, now.scratch)) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    bool ours = marked(path);
    for (auto it = now.scratch.upper_bound(path); !ours && it != now.scratch.end(); ++it) {
      if (!Under(*it, path)) break;
      ours = marked(*it);
    }
    if (ours) left.push_back(path);
  }
  return left;
}

std::vector<std::string> CompareHost(const HostSnapshot& before, const HostSnapshot& after) {
  std::vector<std::string> leaks;
  for (const auto& l : FindHostLeaks(before, after, {})) leaks.push_back(l.what);
  return leaks;
}

static std::string LoopDeviceName(const std::string& device) {
  return device.rfind("/dev/", 0) == 0 ? device.substr(5) : device;
}

std::string LoopBackingFile(const std::string& device) {
  const std::string name = LoopDeviceName(device);
  if (name.rfind("loop", 0) != 0 || name.find('/') != std::string::npos) return "";
  return LoopAttribute(name, "backing_file");
}

bool LoopReleased(const std::string& device, const std::string& backing,
                  std::chrono::milliseconds grace) {
  const std::string name = LoopDeviceName(device);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (LoopAttribute(name, "backing_file") == backing) {
    if (LoopAttribute(name, "autoclear") != "1" || std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::vector<HostLeak> FindHostLeaks(const HostSnapshot& before, const HostSnapshot& after,
                                    const CaseMarks& marks) {
  const std::string& run = after.run_dir;
  const std::string case_dir = marks.case_dir.empty() ? "" : Resolved(marks.case_dir);
  // A name the case made: "<stem>-<prefix>-<n>".
  auto named = [&marks](const std::string& text) {
    return !marks.unique_prefix.empty() &&
           text.find("-" + marks.unique_prefix + "-") != std::string::npos;
  };
  // Cases of one run overlap (-j): what is under a sibling case dir is that
  // case's, so with a case named only its own dir counts.
  auto ours_path = [&](const std::string& path) {
    return BackedUnder(path, case_dir.empty() ? run : case_dir) || named(path);
  };
  std::set<pid_t> our_pids;
  std::vector<HostLeak> leaks;
  for (const auto& [pid, start] : after.processes) {
    auto was = before.processes.find(pid);
    if ((was != before.processes.end() && was->second == start) || pid == ::getpid()) continue;
    const bool ours =
        after.descendants.count(pid) ||
        (!marks.case_dir.empty() && HasEnvEntry(pid, "FLEXCONFORM_CASE_DIR=" + marks.case_dir));
    if (!ours || StartTime(pid) != start) continue;  // gone meanwhile, or not the case's
    our_pids.insert(pid);
    leaks.push_back({HostLeak::Kind::kProcess, std::to_string(pid),
                     "process left: pid " + std::to_string(pid) + " " + CommandLine(pid)});
  }
  for (const auto& m : sim::MountsAdded(before.mounts, after.mounts)) {
    if (!ours_path(m.target) && !ours_path(m.source)) continue;
    leaks.push_back({HostLeak::Kind::kMount, m.target,
                     "host mount left: " + m.source + " on " + m.target + " (" + m.fs_type + ")"});
  }
  std::set<std::string> our_loops;
  for (const auto& [name, backing] : after.loops) {
    auto was = before.loops.find(name);
    if ((was != before.loops.end() && was->second == backing) || !ours_path(backing)) continue;
    if (LoopReleased(name, backing)) continue;  // detached; another process held it a moment
    our_loops.insert(name);
  }
  for (const auto& [name, dm_name] : after.dm) {
    auto was = before.dm.find(name);
    if (was != before.dm.end() && was->second == dm_name) continue;
    bool ours = named(dm_name);
    std::error_code ec;
    for (const auto& slave :
         std::filesystem::directory_iterator("/sys/block/" + name + "/slaves", ec)) {
      ours |= our_loops.count(slave.path().filename().string()) > 0;
    }
    if (ours)
      leaks.push_back({HostLeak::Kind::kDeviceMapper, dm_name,
                       "device-mapper device left: " + name + " (" + dm_name + ")"});
  }
  for (const auto& [name, pid] : after.nbd) {
    auto was = before.nbd.find(name);
    if (was != before.nbd.end() && was->second == pid) continue;
    const pid_t server = static_cast<pid_t>(std::atol(pid.c_str()));
    const bool ours =
        our_pids.count(server) || after.descendants.count(server) ||
        (!marks.case_dir.empty() && HasEnvEntry(server, "FLEXCONFORM_CASE_DIR=" + marks.case_dir));
    if (ours)
      leaks.push_back({HostLeak::Kind::kNbd, "/dev/" + name,
                       "nbd device left connected: /dev/" + name + " (served by pid " + pid + ")"});
  }
  for (const auto& name : our_loops) {
    leaks.push_back({HostLeak::Kind::kLoop, "/dev/" + name,
                     "loop device left: " + name + " -> " + after.loops.at(name)});
  }
  // Scratch entries, parents before children (the set's order): one named
  // for the case, or a file holding a secret only it sent, and nothing
  // under an entry already taken.
  std::vector<std::string> taken;
  for (const auto& path : after.scratch) {
    if (before.scratch.count(path) || BackendPath(path, marks.backend_paths)) continue;
    if (std::any_of(taken.begin(), taken.end(),
                    [&path](const std::string& t) { return Under(path, t); }))
      continue;
    std::error_code ec;
    const bool dir = std::filesystem::is_directory(std::filesystem::symlink_status(path, ec));
    if (named(std::filesystem::path(path).filename().string())) {
      taken.push_back(path);
      leaks.push_back({HostLeak::Kind::kFile, path,
                       std::string(dir ? "dir" : "file") + " left in a scratch place: " + path});
    } else if (HoldsASecret(path, marks.secrets)) {
      leaks.push_back({HostLeak::Kind::kSecretFile, path,
                       "file left in a scratch place holding a secret the case sent: " + path});
    }
  }
  return leaks;
}

std::vector<std::string> ReclaimHostLeaks(const std::vector<HostLeak>& leaks) {
  std::vector<std::string> lines(leaks.size());
  auto order = [](HostLeak::Kind k) { return static_cast<int>(k); };
  std::vector<std::size_t> idx(leaks.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  // Kind order frees what holds the next (a process keeps a mount busy, a
  // mount its device, a dm device its loop device); deeper mounts first.
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
    if (leaks[x].kind != leaks[y].kind) return order(leaks[x].kind) < order(leaks[y].kind);
    return leaks[x].kind == HostLeak::Kind::kMount && leaks[x].id.size() > leaks[y].id.size();
  });
  for (std::size_t i : idx) {
    const HostLeak& l = leaks[i];
    std::string failed;
    switch (l.kind) {
      case HostLeak::Kind::kProcess: {
        const pid_t pid = static_cast<pid_t>(std::stol(l.id));
        if (::kill(pid, SIGKILL) != 0 && errno != ESRCH) failed = std::strerror(errno);
        for (int t = 0; t < 100 && !StartTime(pid).empty(); ++t)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        break;
      }
      case HostLeak::Kind::kMount:
        if (::umount2(l.id.c_str(), MNT_DETACH) != 0) failed = std::strerror(errno);
        break;
      case HostLeak::Kind::kDeviceMapper:
        failed = Tool({"dmsetup", "remove", "--force", l.id});
        break;
      case HostLeak::Kind::kNbd:
        failed = Tool({"nbd-client", "-d", l.id});
        break;
      case HostLeak::Kind::kLoop:
        failed = Tool({"losetup", "-d", l.id});
        break;
      case HostLeak::Kind::kFile:
        failed = RemoveUnlessMountedUnder(l.id);
        break;
      case HostLeak::Kind::kSecretFile:
        lines[i] = l.what + " (left: not named for the case, it may be a log other cases share)";
        continue;
    }
    lines[i] = l.what + (failed.empty() ? " (reclaimed)" : " (could not reclaim: " + failed + ")");
  }
  return lines;
}

std::vector<std::string> CompareNode(const sim::Node& node, const NodeSnapshot& before,
                                     const NodeSnapshot& after,
                                     const std::set<pid_t>& fixture_pids) {
  std::vector<std::string> leaks;
  // Only what was mounted on the node: a restart's fresh namespace copies
  // the host's mounts, another program's among them, which are not the
  // case's (the host audit judges the host's by the case's marks).
  const auto added = sim::MountsAdded(before.mounts, after.mounts);
  for (const auto& m : sim::MountsAdded(*node.MountsAtStart(), added)) {
    leaks.push_back(node.name() + ": mount left: " + m.source + " on " + m.target + " (" +
                    m.fs_type + ")");
  }
  for (const auto& f : after.files) {
    if (!before.files.count(f)) leaks.push_back(node.name() + ": file left: " + f);
  }
  // A process still exiting (a FUSE daemon whose mount just went, a
  // zombie its parent has not reaped yet) is not left behind: the audit
  // gives the namespace a moment, as for a pending loop detach.
  std::vector<pid_t> left;
  for (pid_t p : node.ProcessesInNamespace()) {
    // The fixture's daemons (run under nsenter, or by a hook) and
    // whatever they fork are theirs.
    bool fixtures = false;
    for (pid_t q = p; q > 1 && !fixtures;) {
      fixtures = fixture_pids.count(q) > 0;
      const auto stat = ReadProcStat(q);
      q = stat ? stat->ppid : 0;
    }
    if (!fixtures) left.push_back(p);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto alive = [](pid_t p) {
    auto stat = ReadProcStat(p);
    return stat && stat->state != 'Z' && stat->state != 'X';
  };
  while (std::any_of(left.begin(), left.end(), alive) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : left) {
    if (!alive(p)) continue;
    leaks.push_back(node.name() + ": process left in the namespace: pid " + std::to_string(p) +
                    " " + CommandLine(p));
  }
  return leaks;
}

bool HasEnvKey(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string e;
  while (std::getline(in, e, '\0')) {
    if (e.size() > key.size() && e.compare(0, key.size(), key) == 0 && e[key.size()] == '=')
      return true;
  }
  return false;
}

}  // namespace flexkit::conform
