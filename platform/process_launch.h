#pragma once
// Starting a process: the project's one way to fork and exec (the driver
// calls of flexsim's BoostProcessRunner, flexconform's helpers and fixture
// daemons, a node's mkfs, the fake daemon's mkfs and tar), on Boost.Process
// v2 (1.81) with these workarounds:
// every fd above 2 close-on-exec in the child (1.81's close_all skips
// ranges), _exit(127) when exec fails (the launcher's exit() would run the
// parent's atexit handlers). The child gets stdin /dev/null, its own
// process group (so the caller can kill what it forks) and no blocked
// signals (kubelet's drivers start with none; blocked masks survive exec).
#include <sched.h>
#include <sys/types.h>

#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

namespace flexkit::platform {

// The namespaces a child joins through LaunchSpec::namespace_fd: the mount
// namespace and the UTS namespace (hostname) of the process behind it.
inline constexpr int kJoinedNamespaces = CLONE_NEWNS | CLONE_NEWUTS;

struct LaunchSpec {
  std::string executable{};                            // argv[0], an absolute path
  std::vector<std::string> args{};                     // argv[1..]
  std::map<std::string, std::string> env_overrides{};  // on top of the inherited environment
  // A pidfd (e.g. of a simulated node's holder) whose kJoinedNamespaces the
  // child joins, or -1: the caller's. The child keeps the caller's working
  // directory either way.
  int namespace_fd = -1;
  // Not empty: the child then runs in a UTS namespace of its own with this
  // hostname (at most 64 bytes).
  std::string hostname{};
  int stdout_fd = -1;  // -1: /dev/null
  int stderr_fd = -1;  // -1: /dev/null
  // Sent to the child when the thread that launched it dies
  // (PR_SET_PDEATHSIG), so a killed harness leaves no helper behind; 0: none.
  int parent_death_signal = 0;
};

struct Launched {
  pid_t pid = -1;     // the caller reaps it
  std::string error;  // not empty: exec failed (the child is reaped), pid is -1
};

Launched Launch(const LaunchSpec& spec);

// A child holds every fd of its parent from vfork to exec, O_CLOEXEC ones
// too, and one fd in a mount makes that mount's unmount fail with EBUSY:
// a harness thread reading a volume's file while another thread launches
// would make the driver's unmount of that volume fail. Launch holds this
// exclusively until the child has exec'd; whoever opens files in a mount
// that may be unmounted meanwhile holds it shared while they are open.
std::shared_mutex& LaunchLock();

// Launches and waits: the exit code, or -signal; 127 when exec failed, as
// a shell answers.
int LaunchAndWait(const LaunchSpec& spec);

}  // namespace flexkit::platform
