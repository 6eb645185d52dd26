#include "driver/sdk/write_fully.h"

#include <unistd.h>

#include <cerrno>

namespace flexvolume {

void WriteFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace flexvolume
