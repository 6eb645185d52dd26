// The one whole-file reader: every byte (NULs, megabytes), errors that
// carry errno and name the step and the path, and the first-line reader
// that /proc and /sys attributes use.
#include "platform/read_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>

#include "platform/unique_fd.h"
#include "tests/support/temp_dir.h"

namespace flexkit::platform {
namespace {

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

TEST(ReadWholeFile, ReadsEveryByteOfALargeFile) {
  flexkit::testing::TempDir dir{"read-file"};
  std::string content(3 * 65536 + 17, 'x');
  content[5] = '\0';
  content[70000] = '\n';
  Write(dir.path() + "/big", content);
  EXPECT_EQ(ReadWholeFile(dir.path() + "/big"), content);
  Write(dir.path() + "/empty", "");
  EXPECT_EQ(ReadWholeFile(dir.path() + "/empty"), "");
}

TEST(ReadWholeFile, AnErrorCarriesErrnoAndNamesTheStepAndThePath) {
  flexkit::testing::TempDir dir{"read-file"};
  try {
    ReadWholeFile(dir.path() + "/missing");
    FAIL() << "no error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_EQ(std::string(e.what()), "open " + dir.path() + "/missing: No such file or directory");
  }
  try {
    ReadWholeFile(dir.path());
    FAIL() << "no error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EISDIR);
    EXPECT_EQ(std::string(e.what()), "read " + dir.path() + ": Is a directory");
  }
}

TEST(ReadToEnd, ReadsFromTheCurrentOffset) {
  flexkit::testing::TempDir dir{"read-file"};
  Write(dir.path() + "/f", "head:tail");
  const UniqueFd fd(::open((dir.path() + "/f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(fd.get(), 0);
  ASSERT_EQ(::lseek(fd.get(), 5, SEEK_SET), 5);
  EXPECT_EQ(ReadToEnd(fd.get(), "f"), "tail");
}

TEST(ReadFirstLine, IsTheFirstLineOrEmptyWhenTheFileIsGone) {
  flexkit::testing::TempDir dir{"read-file"};
  Write(dir.path() + "/attr", "/var/lib/backing.img\nmore\n");
  EXPECT_EQ(ReadFirstLine(dir.path() + "/attr"), "/var/lib/backing.img");
  Write(dir.path() + "/no-newline", "S");
  EXPECT_EQ(ReadFirstLine(dir.path() + "/no-newline"), "S");
  EXPECT_EQ(ReadFirstLine(dir.path() + "/gone"), "");
  EXPECT_FALSE(ReadFirstLine("/proc/self/stat").empty());
}

}  // namespace
}  // namespace flexkit::platform
