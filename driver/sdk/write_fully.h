#pragma once
// write(2) until everything is written or the descriptor fails; safe in a
// signal handler (no allocation, no locks), which is where the crash reply
// is written from.
#include <cstddef>

namespace flexvolume {

void WriteFully(int fd, const char* data, size_t size);

}  // namespace flexvolume
