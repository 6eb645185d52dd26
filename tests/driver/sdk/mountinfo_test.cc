#include "driver/sdk/mountinfo.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <libmount.h>
#include <rapidcheck/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "tests/support/temp_dir.h"

namespace flexvolume {
namespace {

std::vector<MountEntry> Parse(std::string_view text) {
  std::vector<MountEntry> out;
  std::string err;
  EXPECT_TRUE(ParseMountInfo(text, &out, &err)) << err;
  return out;
}

// As the kernel's mangle_path writes a field.
std::string KernelEscaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      char octal[5];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

TEST(ParseMountInfo, ReadsTheProcManPageExample) {
  auto e =
      Parse("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].target, "/mnt2");
  EXPECT_EQ(e[0].options, "rw,noatime");
  EXPECT_EQ(e[0].fstype, "ext3");
  EXPECT_EQ(e[0].source, "/dev/root");
  EXPECT_FALSE(e[0].read_only);
}

TEST(ParseMountInfo, TakesAnyNumberOfOptionalFieldsAndKeepsMountOrder) {
  auto e = Parse(
      "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "23 22 0:5 / /proc rw,nosuid shared:1 master:2 propagate_from:3 - proc proc rw\n"
      "24 22 0:6 / /proc ro - tmpfs none ro\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].target, "/");
  EXPECT_EQ(e[1].fstype, "proc");
  EXPECT_EQ(e[1].source, "proc");
  EXPECT_EQ(e[2].target, "/proc");  // stacked: the topmost comes last
  EXPECT_TRUE(e[2].read_only);
}

TEST(ParseMountInfo, DecodesTheKernelsOctalEscapesAndNothingElse) {
  auto e = Parse(
      "30 1 0:40 / /a\\040b\\011c\\012d\\134e rw - tmpfs src\\040x rw\n"
      "31 1 0:41 / /lit\\08\\x\\ rw - tmpfs s rw\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].target, "/a b\tc\nd\\e");
  EXPECT_EQ(e[0].source, "src x");
  EXPECT_EQ(e[1].target, "/lit\\08\\x\\");  // not three octal digits: kept as written
}

TEST(ParseMountInfo, AnEmptySourceIsAnEmptyFieldNotTheNextOne) {
  // mount("", ...) is written as two spaces in a row.
  auto e = Parse("40 1 0:50 / /e rw - tmpfs  rw,size=1024k\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].source, "");
  EXPECT_EQ(e[0].fstype, "tmpfs");
}

TEST(ParseMountInfo, ReadOnlyIsTheRoOptionNotASubstring) {
  auto e = Parse(
      "1 0 0:1 / /a rw,errors=remount-ro - ext4 /dev/x rw\n"
      "2 0 0:1 / /b nosuid,ro - ext4 /dev/x rw\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_FALSE(e[0].read_only);
  EXPECT_TRUE(e[1].read_only);
  EXPECT_TRUE(HasMountOption("rw,nosuid", "nosuid"));
  EXPECT_FALSE(HasMountOption("rw,nosuid", "nosu"));
  EXPECT_FALSE(HasMountOption("", "ro"));
}

TEST(ParseMountInfo, AnEmptyTableAndAMissingLastNewlineAreFine) {
  EXPECT_TRUE(Parse("").empty());
  EXPECT_EQ(Parse("1 0 0:1 / / rw - ext4 /dev/x rw").size(), 1u);
}

TEST(ParseMountInfo, RefusesALineOfAnotherShapeNamingItsNumber) {
  const std::string good = "1 0 0:1 / / rw - ext4 /dev/x rw\n";
  for (const std::string bad : {
           "2 1 0:2 / /x rw shared:1 ext4 /dev/y rw\n",  // no separator
           "2 1 0:2 / /x rw - ext4 /dev/y\n",            // no super options
           "2 1 0:2 / /x rw - ext4 /dev/y rw extra\n",   // one field too many
           "x 1 0:2 / /x rw - ext4 /dev/y rw\n",         // mount ID not a number
           "2 1 0:2 /\n",                                // cut short
       }) {
    std::vector<MountEntry> out = {MountEntry{}};
    std::string err;
    EXPECT_FALSE(ParseMountInfo(good + bad, &out, &err)) << bad;
    EXPECT_NE(err.find("mountinfo line 2"), std::string::npos) << err;
    EXPECT_TRUE(out.empty());
  }
}

RC_GTEST_PROP(ParseMountInfo, EveryPathTheKernelEscapesComesBack, (std::string target)) {
  RC_PRE(target.find('\0') == std::string::npos);
  const std::string line =
      "7 1 0:9 / " + KernelEscaped("/" + target) + " rw - tmpfs " + KernelEscaped(target) + " rw\n";
  std::vector<MountEntry> out;
  std::string err;
  RC_ASSERT(ParseMountInfo(line, &out, &err));
  RC_ASSERT(out.size() == 1u);
  RC_ASSERT(out[0].target == "/" + target);
  RC_ASSERT(out[0].source == target);
}

// The same file read by libmount, the harness's parser: every entry the
// same, on whatever this machine has mounted.
TEST(ParseMountInfo, AgreesWithLibmountOnThisMachinesTable) {
  const std::string text = flexkit::testing::ReadFileText("/proc/self/mountinfo");
  const auto ours = Parse(text);
  std::unique_ptr<libmnt_table, void (*)(libmnt_table*)> table(mnt_new_table(), mnt_unref_table);
  ASSERT_TRUE(table);
  char path[] = "/tmp/flexkit-mountinfo-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  ASSERT_EQ(mnt_table_parse_mtab(table.get(), path), 0);
  ::unlink(path);
  ASSERT_EQ(static_cast<std::size_t>(mnt_table_get_nents(table.get())), ours.size());
  std::unique_ptr<libmnt_iter, void (*)(libmnt_iter*)> iter(mnt_new_iter(MNT_ITER_FORWARD),
                                                            mnt_free_iter);
  libmnt_fs* fs = nullptr;
  auto str = [](const char* s) { return std::string(s != nullptr ? s : ""); };
  for (const auto& e : ours) {
    ASSERT_EQ(mnt_table_next_fs(table.get(), iter.get(), &fs), 0);
    EXPECT_EQ(e.target, str(mnt_fs_get_target(fs)));
    EXPECT_EQ(e.source, str(mnt_fs_get_source(fs)));
    EXPECT_EQ(e.fstype, str(mnt_fs_get_fstype(fs)));
    EXPECT_EQ(e.options, str(mnt_fs_get_vfs_options(fs)));
  }
}

// A real mount whose target and source hold a space, a tab, a backslash
// and UTF-8, found through SystemMounter in a private namespace.
int MountsAHostileName(const std::string& dir) {
  const std::string target = dir + "/a b\tc\\d-\xc3\xa9";
  if (::mkdir(target.c_str(), 0755) != 0) return 1;
  SystemMounter m;
  std::string err;
  if (!m.Mount("flex kit\\src", target, "tmpfs", MS_RDONLY, "size=1m", &err)) return 2;
  std::optional<MountEntry> found;
  if (!m.FindMount(target, &found, &err) || !found) return 3;
  if (found->source != "flex kit\\src" || found->fstype != "tmpfs" || !found->read_only) return 4;
  return m.Unmount(target, &err) ? 0 : 5;
}

TEST(SystemMounter, FindsAMountWhoseNameTheKernelEscapes) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      _exit(100);
    }
    _exit(MountsAHostileName(dir.path()));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace flexvolume
