#pragma once
// Small file-system helpers shared by the cloud and the daemon. Errors are
// std::runtime_error texts naming the operation, the path and errno's reason.
#include <cstdint>
#include <string>
#include <string_view>

namespace flexkit::fakes {

// Writes `content` to `path` atomically: a temp file in the same directory,
// fsync, rename over `path`, fsync of the directory. A reader sees the old
// or the new file, never a half-written one, even after a kill -9.
void WriteFileAtomically(const std::string& path, std::string_view content);
// Copies `from` to a new file `to` (mode 0600), keeping holes, then sets its
// size to `size` bytes (the new volume may be larger than the snapshot).
// A failed copy leaves no `to` behind.
void CopySparseFile(const std::string& from, const std::string& to, int64_t size);
// mkdir -p with `mode` for the directories it creates.
void MakeDirs(const std::string& path, unsigned mode = 0700);
// Lexically cleaned path, as Go's filepath.Clean.
std::string CleanPath(std::string_view path);
// True when `path` (cleaned) is `dir` itself or below it.
bool IsWithin(const std::string& path, const std::string& dir);
// strerror text starting lowercase, as Go prints syscall errors.
std::string GoErrno(int err);

}  // namespace flexkit::fakes
