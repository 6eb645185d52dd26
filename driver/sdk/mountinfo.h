#pragma once
// The mount table as the kernel writes it to /proc/<pid>/mountinfo
// (proc(5)), parsed field by field the way Kubernetes' mount-utils does
// (ParseMountInfo). The SDK parses it itself rather than with libmount so
// that a driver binary can be linked statically: a static glibc cannot
// load a shared library safely, and a static binary starts faster than
// /bin/true (tests/bench/exec_init_bench). The harness reads the same
// files with libmount, so a bug here cannot hide behind the judge.
#include <string>
#include <string_view>
#include <vector>

#include "driver/sdk/mounter.h"

namespace flexvolume {

// One entry per line, in mount order:
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   (1)(2)(3)  (4)   (5)   (6)        (7...)  (8)(9)  (10)      (11)
// keeps the mount point (5), the per-mount options (6), the filesystem
// type (9) and the source (10), with the kernel's octal escapes (\040 for
// a space, \011, \012, \134) decoded. A line that does not have this shape
// is an error naming its line number, and *out is left empty.
bool ParseMountInfo(std::string_view text, std::vector<MountEntry>* out, std::string* err);

// Whether the comma-separated option list holds exactly `option`.
bool HasMountOption(std::string_view options, std::string_view option);

}  // namespace flexvolume
