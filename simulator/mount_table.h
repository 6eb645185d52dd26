#pragma once
// The mounts a process sees, read from /proc/<pid>/mountinfo with libmount.
#include <sys/types.h>

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

// How many mounts of `table` are at `target` (each stacked one counts).
std::size_t MountCountAt(const std::vector<MountEntry>& table, const std::string& target);

// The VFS options of the topmost mount at `target`; "" when none is there.
std::string TopmostOptionsAt(const std::vector<MountEntry>& table, const std::string& target);

// Entries of `after` not in `before`, compared by target, source and type.
std::vector<MountEntry> MountsAdded(const std::vector<MountEntry>& before,
                                    const std::vector<MountEntry>& after);

}  // namespace flexkit::sim
