#pragma once
// A directory under $TMPDIR (or /tmp) that is removed, with its contents,
// when the object goes out of scope.
#include <string>

namespace flexkit::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "flexkit-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The whole content of the file at `path` (bytes as they are), or "" when
// it cannot be read.
std::string ReadFileText(const std::string& path);

// True when the tests run as root (mounts and loop devices are possible).
bool IsRoot();

}  // namespace flexkit::testing

// Skips the current test, with the reason, unless it runs as root.
#define FLEXKIT_REQUIRE_ROOT()                                               \
  do {                                                                       \
    if (!::flexkit::testing::IsRoot()) GTEST_SKIP() << "needs root: mounts"; \
  } while (0)
