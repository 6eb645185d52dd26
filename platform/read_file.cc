#include "platform/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "platform/unique_fd.h"

namespace flexkit::platform {

std::string ReadToEnd(int fd, const std::string& path) {
  std::string text;
  std::size_t used = 0;
  for (;;) {
    text.resize(used + 65536);
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "read " + path);
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  text.resize(used);
  return text;
}

std::string ReadWholeFile(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
  return ReadToEnd(fd.get(), path);
}

std::string ReadFirstLine(const std::string& path) {
  try {
    std::string text = ReadWholeFile(path);
    return text.substr(0, text.find('\n'));
  } catch (const std::system_error&) {
    return "";
  }
}

}  // namespace flexkit::platform
