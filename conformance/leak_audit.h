#pragma once
// What a case must leave as it found it (DESIGN §3, anchors F26): mounts
// and regular files in each node's namespace and kubelet dirs, processes
// in the node's namespace, and anywhere on the host: mounts, loop,
// device-mapper and nbd devices and processes, attributed to the case by
// its marks (CaseMarks), so other users of the machine, other flexconform
// runs among them, never make a case fail and never lose what they own.
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulator/mount_table.h"
#include "simulator/node.h"

namespace flexkit::conform {

// The host's common scratch places, where drivers keep credentials files,
// clones, locks and logs (anchors F26).
inline const std::vector<std::string> kScratchPlaces = {"/tmp", "/var/tmp", "/run", "/dev/shm"};

// The host as a case may change it, whatever the driver under test does:
// every mount of flexconform's namespace, every loop, device-mapper and
// connected nbd device, every process, and the entries of the scratch
// places.
struct HostSnapshot {
  std::string run_dir;                       // resolved
  std::vector<sim::MountEntry> mounts;       // in flexconform's namespace
  std::map<std::string, std::string> loops;  // "loop7" -> backing file, " (deleted)" kept
  std::map<std::string, std::string> dm;     // "dm-3" -> its device-mapper name
  std::map<std::string, std::string> nbd;    // "nbd0" -> the pid serving it (connected only)
  std::map<pid_t, std::string> processes;    // pid -> start time (tells a reused pid apart)
  std::set<pid_t> descendants;               // processes descended from `root`
  // Entries of kScratchPlaces and of their dirs ("/tmp/x", "/tmp/x/y"),
  // symlinks not followed, the run dir and what it holds left out.
  std::set<std::string> scratch;
};
// `root`: flexconform itself, or the worker of a case stopped mid-run.
HostSnapshot TakeHostSnapshot(const std::string& run_dir, pid_t root = ::getpid());

// The live processes descended from `root` (children, their children...).
std::set<pid_t> Descendants(pid_t root);

// The fields of /proc/<pid>/stat the audit reads; none when the process
// is gone.
struct ProcStat {
  char state = 0;  // R, S, D, Z...
  pid_t ppid = 0;
  std::string start_time;  // field 22, in clock ticks since boot
};
std::optional<ProcStat> ReadProcStat(pid_t pid);

// Process `pid`'s argv for a message, cut at 200 characters; a JSON
// argument (a driver's options, where kubelet puts the secrets) is "{...}".
std::string CommandLine(pid_t pid);

// What ties a host object to one case: the case dir (FLEXCONFORM_CASE_DIR
// in every driver call's environment, so in every process the driver
// starts) and the unique prefix in every name the case made (volumes, pods:
// "vol-<prefix>-1"), which a driver's backing files and device names
// usually carry. What another flexconform run (another prefix, another
// case dir) or anything else on the machine made is not the case's.
// A scratch entry is the case's when its name carries the unique prefix,
// or when it is a file holding a secret only this case sent (a credentials
// file under a random name).
struct CaseMarks {
  std::string case_dir;
  std::string unique_prefix;
  std::vector<std::string> secrets = {};  // raw values of this case alone
  // Paths the profile's volume options name ("/srv/{{unique}}.img", a
  // share's dir): the backend's data, which outlives a volume's teardown.
  std::vector<std::string> backend_paths = {};
};

struct HostLeak {
  // In reclaim order: each frees what the next may need (a process holds
  // a mount, a mount its device, a loop device its backing file).
  enum class Kind { kProcess, kMount, kDeviceMapper, kNbd, kLoop, kFile, kSecretFile };
  Kind kind;
  std::string id;    // pid, mount target, dm name, /dev/nbdN, /dev/loopN, path
  std::string what;  // "loop device left: loop7 -> /srv/vol-r1c2-1.img"
};

// What appeared between `before` and `after` and belongs to the case:
// under the case dir (the run dir when `marks` names no case; a sibling
// case of the same run may be running meanwhile), or carrying the case's marks (a process with its
// FLEXCONFORM_CASE_DIR, or descended from flexconform; a loop device whose
// backing file, a mount whose source or target, a dm device whose name
// names the case's prefix; a dm device over such a loop device; an nbd
// device served by such a process; a scratch entry as CaseMarks says).
std::vector<HostLeak> FindHostLeaks(const HostSnapshot& before, const HostSnapshot& after,
                                    const CaseMarks& marks);
// Takes each leak back, in the order that frees the others (processes
// killed, mounts unmounted deepest first, dm devices removed, nbd devices
// disconnected, loop devices detached, scratch entries named for the case
// removed; a file that holds the case's secret but not its name may be a
// log other cases share, and stays); returns one line per leak saying what
// happened to it.
std::vector<std::string> ReclaimHostLeaks(const std::vector<HostLeak>& leaks);

struct NodeSnapshot {
  std::vector<sim::MountEntry> mounts;  // the node namespace's mount table
  std::set<std::string> files;  // regular files under the node's kubelet root and plugin dir
};
NodeSnapshot TakeNodeSnapshot(const sim::Node& node);

// The scratch entries new since `run_start` that are still there and bear
// one of `run_marks` (the run's name prefix, its dir, the profile's
// secrets) in a name or a file's content, theirs or, for a dir, one of
// its entries': what the run's driver calls left that no case claims (a
// log of every volume, credentials under a random name). Another
// program's entries bear none. The top-most new entry of each.
std::vector<std::string> ScratchEntriesAdded(const HostSnapshot& run_start, const HostSnapshot& now,
                                             const std::vector<std::string>& run_marks);

// "what leaked" lines under the run dir alone; empty when nothing did.
std::vector<std::string> CompareHost(const HostSnapshot& before, const HostSnapshot& after);
// A node's leaks: mounts made on the node since `before` (not those its
// namespace copied from the host at a restart: Node::MountsAtStart), files
// added, and processes left in its namespace other than `fixture_pids` and
// their descendants (the fixture's agents and what they fork).
std::vector<std::string> CompareNode(const sim::Node& node, const NodeSnapshot& before,
                                     const NodeSnapshot& after,
                                     const std::set<pid_t>& fixture_pids);

// True when process `pid`'s environment holds an entry `key`=... .
bool HasEnvKey(pid_t pid, const std::string& key);

// A loop device detached while another process holds it open (a
// concurrent `losetup -f` probing it, a blkid) stays bound, flagged
// autoclear, until that process closes it: the kernel's deferred detach.
// True when `device` ("/dev/loop4" or "loop4") is not bound to `backing`,
// at once or, when its detach is pending, within `grace`.
bool LoopReleased(const std::string& device, const std::string& backing,
                  std::chrono::milliseconds grace = std::chrono::seconds(2));

// The backing file of loop device `device` ("/dev/loop7" or "loop7"), ""
// when it is not a bound loop device.
std::string LoopBackingFile(const std::string& device);

// Loop devices whose backing file is under `dir` (the sweep of a killed run).
std::vector<std::string> LoopDevicesUnder(const std::string& dir);

}  // namespace flexkit::conform
