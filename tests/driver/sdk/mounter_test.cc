#include "driver/sdk/mounter.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/temp_dir.h"

namespace flexvolume {
namespace {

TEST(SystemMounter, ListsTheRootMount) {
  SystemMounter m;
  std::string err;
  std::optional<MountEntry> root;
  ASSERT_TRUE(m.FindMount("/", &root, &err)) << err;
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->target, "/");
}

TEST(SystemMounter, PathsSharingAPrefixAreNotConfused) {
  SystemMounter m;
  std::string err;
  std::optional<MountEntry> found;
  // /proc is a mount point; /pro, a prefix of it, is not and must not match it.
  ASSERT_TRUE(m.FindMount("/proc", &found, &err)) << err;
  EXPECT_TRUE(found.has_value());
  ASSERT_TRUE(m.FindMount("/pro", &found, &err)) << err;
  EXPECT_FALSE(found.has_value());
}

TEST(FakeMounter, UnmountOfNothingIsAnError) {
  FakeMounter m;
  std::string err;
  EXPECT_FALSE(m.Unmount("/x", &err));
  EXPECT_NE(err.find("/x"), std::string::npos);
}

TEST(FakeMounter, FindsTheTopmostMount) {
  FakeMounter m;
  std::string err;
  ASSERT_TRUE(m.Mount("a", "/x", "tmpfs", 0, "", &err));
  ASSERT_TRUE(m.Mount("b", "/x", "tmpfs", MS_RDONLY, "", &err));
  std::optional<MountEntry> top;
  ASSERT_TRUE(m.FindMount("/x", &top, &err)) << err;
  ASSERT_TRUE(top);
  EXPECT_EQ(top->source, "b");
  EXPECT_TRUE(top->read_only);
}

TEST(FakeMounter, FindMountThatCannotReadTheTableSaysWhy) {
  FakeMounter m;
  std::string err;
  std::optional<MountEntry> found = MountEntry{"stale", "/x", "tmpfs", "rw", false};
  m.fail_with = "read /proc/self/mountinfo: EIO";
  EXPECT_FALSE(m.FindMount("/x", &found, &err));
  EXPECT_EQ(err, "read /proc/self/mountinfo: EIO");
  m.fail_with.clear();
  ASSERT_TRUE(m.FindMount("/x", &found, &err)) << err;
  EXPECT_FALSE(found.has_value());  // an earlier answer is not left behind
}

// Runs `body` in a forked child inside a private mount namespace; the
// child's exit code is the result (0 = all checks passed).
int InPrivateNamespace(int (*body)(const std::string&), const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      _exit(100);
    }
    _exit(body(dir));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

int MountFindUnmount(const std::string& dir) {
  SystemMounter m;
  std::string err;
  if (!m.Mount("flexkit-test", dir, "tmpfs", MS_RDONLY | MS_NOSUID, "size=1m", &err)) return 1;
  std::optional<MountEntry> found;
  if (!m.FindMount(dir, &found, &err) || !found) return 2;
  if (found->source != "flexkit-test" || found->fstype != "tmpfs") return 3;
  if (!found->read_only) return 4;
  if (!m.Unmount(dir, &err)) return 5;
  if (!m.FindMount(dir, &found, &err) || found) return 6;
  if (m.Unmount(dir, &err)) return 7;  // nothing left to unmount
  if (err.find("EINVAL") == std::string::npos) return 8;
  return 0;
}

TEST(SystemMounter, MountFindUnmountInAPrivateNamespace) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  EXPECT_EQ(InPrivateNamespace(MountFindUnmount, dir.path()), 0);
}

}  // namespace
}  // namespace flexvolume
