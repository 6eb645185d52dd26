#include "driver/sdk/file_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace flexvolume {

std::optional<std::string> ReadFileText(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[16384];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int saved = errno;
      close(fd);
      errno = saved;
      return std::nullopt;
    }
  }
  close(fd);
  return text;
}

}  // namespace flexvolume
