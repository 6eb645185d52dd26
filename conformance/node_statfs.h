#pragma once
// What kubelet's volume metrics and resize checks read from a path on a
// node: statfs(2) seen inside the node's mount namespace (through
// /proc/<holder>/root, so the harness needs no process in the namespace).
#include <cstdint>
#include <optional>
#include <string>

#include "simulator/node.h"

namespace flexkit::conform {

struct FsStats {
  std::uint64_t capacity_bytes = 0;   // f_blocks * f_frsize, as MetricsStatFS reports it
  std::uint64_t available_bytes = 0;  // f_bavail * f_frsize
  std::uint64_t inodes = 0;           // f_files
  std::uint64_t inodes_free = 0;      // f_ffree
  std::uint64_t device = 0;           // st_dev of the path itself
};

// ext4 and xfs keep part of the device for metadata (journal, inode
// tables), so statfs reports a little less than the device holds: a
// filesystem of at least this share of a size counts as that size.
inline constexpr double kFsMetadataAllowance = 0.9;

// statfs and stat of `path` on node `n`; nullopt with *err set when either fails.
std::optional<FsStats> StatFsOnNode(const sim::Node& n, const std::string& path, std::string* err);

// A driver's size option ("320Mi", "1G", "64m", "1048576") in bytes, read
// as the smallest value it could mean (decimal for k/M/G, binary for
// Ki/Mi/Gi), since checks only ask for "at least"; nullopt when it is not
// a size.
std::optional<std::uint64_t> ParseSizeOption(const std::string& text);

}  // namespace flexkit::conform
