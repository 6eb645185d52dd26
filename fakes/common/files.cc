#include "fakes/common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace flexkit::fakes {
namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& path, int err) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(err));
}

std::atomic<unsigned long> temp_counter{0};

}  // namespace

void WriteFileAtomically(const std::string& path, std::string_view content) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = dir + "/." + name + "." + std::to_string(::getpid()) + "." +
                     std::to_string(temp_counter++) + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) Fail("create", temp, errno);
  std::string_view rest = content;
  while (!rest.empty()) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      Fail("write", temp, err);
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    Fail("fsync", temp, err);
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    Fail("rename " + temp + " to", path, err);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void CopySparseFile(const std::string& from, const std::string& to, int64_t size) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) Fail("open", from, errno);
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    int err = errno;
    ::close(in);
    Fail("create", to, err);
  }
  auto fail = [&](const std::string& what, const std::string& path) {
    int err = errno;
    ::close(in);
    ::close(out);
    ::unlink(to.c_str());
    Fail(what, path, err);
  };
  // Only the data extents are copied: a 16 GiB volume with a few MiB
  // written copies a few MiB.
  for (off_t data = ::lseek(in, 0, SEEK_DATA); data >= 0; data = ::lseek(in, data, SEEK_DATA)) {
    off_t hole = ::lseek(in, data, SEEK_HOLE);
    if (hole < 0) fail("seek", from);
    for (off_t pos = data; pos < hole;) {
      off_t out_pos = pos;
      ssize_t n = ::copy_file_range(in, &pos, out, &out_pos, static_cast<size_t>(hole - pos), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("copy to " + to + " from", from);
    }
    data = hole;
  }
  if (errno != ENXIO) fail("seek", from);  // ENXIO: no data after the last extent
  if (::ftruncate(out, size) != 0) fail("resize", to);
  if (::fsync(out) != 0) fail("fsync", to);
  ::close(in);
  ::close(out);
}

void MakeDirs(const std::string& path, unsigned mode) {
  std::string cleaned = CleanPath(path);
  std::string partial;
  size_t pos = 0;
  while (pos <= cleaned.size()) {
    size_t next = cleaned.find('/', pos);
    if (next == std::string::npos) next = cleaned.size();
    partial = cleaned.substr(0, next);
    pos = next + 1;
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) Fail("mkdir", partial, errno);
  }
  struct stat st {};
  if (::stat(cleaned.c_str(), &st) != 0) Fail("stat", cleaned, errno);
  if (!S_ISDIR(st.st_mode)) Fail("mkdir", cleaned, ENOTDIR);
}

std::string CleanPath(std::string_view path) {
  if (path.empty()) return ".";
  bool rooted = path[0] == '/';
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    std::string_view part = path.substr(pos, next - pos);
    pos = next + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += "/";
    out += parts[i];
  }
  if (out.empty()) return ".";
  return out;
}

bool IsWithin(const std::string& path, const std::string& dir) {
  std::string p = CleanPath(path), d = CleanPath(dir);
  if (p == d) return true;
  if (d == "/") return p.size() > 1 && p[0] == '/';
  return p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/';
}

std::string GoErrno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace flexkit::fakes
