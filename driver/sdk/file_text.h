#pragma once
// Whole small files (mountinfo, a driver's config and records) read with open(2)
// and read(2): a C++ stream would build the std::locale machinery on the
// way, which costs every exec of the driver pages it does not otherwise
// touch.
#include <optional>
#include <string>

namespace flexvolume {

// The bytes of the file at `path`; nullopt with errno set when it cannot be
// opened or read.
std::optional<std::string> ReadFileText(const std::string& path);

}  // namespace flexvolume
