#pragma once
// Reading a whole file: the one reader every wing uses (profiles, scenarios,
// recordings, a node's files, the fakes' state, /proc and /sys attributes),
// with read(2) in large pieces (a driver binary is megabytes; a /proc table
// is formatted afresh for each read, so it must be read to its end at once).
#include <string>

namespace flexkit::platform {

// The whole file. Throws std::system_error carrying errno, whose what()
// says the step and the path: "open PATH: No such file or directory",
// "read PATH: Is a directory".
std::string ReadWholeFile(const std::string& path);

// Everything from `fd`'s current offset to its end; `path` names it in the
// std::system_error thrown on a read error.
std::string ReadToEnd(int fd, const std::string& path);

// The file's first line without its newline; "" when the file cannot be
// read (a /proc or /sys attribute of something that has just gone).
std::string ReadFirstLine(const std::string& path);

}  // namespace flexkit::platform
