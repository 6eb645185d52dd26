#pragma once
// The mounts a process sees, read from /proc/<pid>/mountinfo with libmount.
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace flexkit::sim {

struct MountEntry {
  std::string target;
  std::string source;
  std::string fs_type;
  std::string options;  // VFS options, e.g. "ro,nosuid"
  // The subtree of the source mounted here: "/" for a whole filesystem, a
  // path for a bind mount of a directory.
  std::string root = "/";
  bool operator==(const MountEntry&) const = default;
};

// Throws std::runtime_error naming the file when it cannot be parsed.
std::vector<MountEntry> ReadMountTable(pid_t pid);

using MountTable = std::shared_ptr<const std::vector<MountEntry>>;

// The mount table of `pid`'s namespace, read again only after it changed:
// the kernel flags an open mountinfo file (poll: POLLPRI) on every mount,
// unmount and remount in its namespace, as findmnt --poll relies on. The
// harness looks at a node's table several times per driver call and most
// calls change nothing, so most looks cost one poll(2). What the kernel
// does not flag is text that changes without a mount event (a rename of a
// directory above a mount point): seen at the next event. The open file
// holds the namespace alive: close it (Close or destroy) when its last
// process is gone. Thread-safe.
class MountTableWatch {
 public:
  explicit MountTableWatch(pid_t pid) : pid_(pid) {}
  ~MountTableWatch() { Close(); }
  MountTableWatch(const MountTableWatch&) = delete;
  MountTableWatch& operator=(const MountTableWatch&) = delete;

  // The table now; throws std::runtime_error as ReadMountTable does.
  MountTable Current();
  void Close();

 private:
  const pid_t pid_;
  std::mutex mutex_;
  int fd_ = -1;
  MountTable table_;
};

// How many mounts of `table` are at `target` (each stacked one counts).
std::size_t MountCountAt(const std::vector<MountEntry>& table, const std::string& target);

// The VFS options of the topmost mount at `target`; "" when none is there.
std::string TopmostOptionsAt(const std::vector<MountEntry>& table, const std::string& target);

// Entries of `after` not in `before`, compared by target, source and type.
std::vector<MountEntry> MountsAdded(const std::vector<MountEntry>& before,
                                    const std::vector<MountEntry>& after);

}  // namespace flexkit::sim
