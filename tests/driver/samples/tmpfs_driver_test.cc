#include "driver/samples/tmpfs/tmpfs_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "driver/sdk/dispatch.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::BuiltBinary;
using flexkit::testing::ProcessResult;
using flexkit::testing::RunProcess;
using flexkit::testing::TempDir;
using flexkit::tmpfs::TmpfsDriver;
using flexvolume::FakeMounter;
using ::testing::HasSubstr;

class TmpfsDriverTest : public ::testing::Test {
 protected:
  TempDir dir;
  FakeMounter mounter;
  TmpfsDriver driver{mounter};
  std::string Vol() const { return dir.Join("pods/uid/volumes/flexkit~tmpfs/vol"); }
};

TEST_F(TmpfsDriverTest, InitIsNonAttachable) {
  auto s = driver.Init();
  ASSERT_TRUE(s.capabilities);
  EXPECT_FALSE(s.capabilities->attach);
}

TEST_F(TmpfsDriverTest, MountCreatesTheDirAndMountsTmpfs) {
  EXPECT_TRUE(driver.Mount(Vol(), {}).IsSuccess());
  EXPECT_TRUE(std::filesystem::is_directory(Vol()));
  ASSERT_EQ(mounter.mounts.size(), 1u);
  EXPECT_EQ(mounter.mounts[0].fstype, "tmpfs");
  EXPECT_EQ(mounter.mounts[0].source, "flexkit-tmpfs");
  EXPECT_FALSE(mounter.mounts[0].read_only);
}

TEST_F(TmpfsDriverTest, ReadOnlyIsHonoured) {
  EXPECT_TRUE(driver.Mount(Vol(), {{"kubernetes.io/readwrite", "ro"}}).IsSuccess());
  ASSERT_EQ(mounter.mounts.size(), 1u);
  EXPECT_TRUE(mounter.mounts[0].read_only);
}

TEST_F(TmpfsDriverTest, MountIsIdempotent) {
  EXPECT_TRUE(driver.Mount(Vol(), {}).IsSuccess());
  EXPECT_TRUE(driver.Mount(Vol(), {}).IsSuccess());
  EXPECT_EQ(mounter.mounts.size(), 1u) << "a repeated mount must not stack";
}

TEST_F(TmpfsDriverTest, MountRefusesSomethingElseMountedThere) {
  std::filesystem::create_directories(Vol());
  mounter.mounts.push_back({"/dev/sda1", Vol(), "ext4", "rw", false});
  auto s = driver.Mount(Vol(), {});
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("ext4 from /dev/sda1 is already mounted"));
}

TEST_F(TmpfsDriverTest, SizeIsValidatedAgainstOptionInjection) {
  for (const char* size : {"1m,uid=0", "1m nosuid", "", "m", "-1", "1t", "1mm"}) {
    if (*size == '\0') continue;  // an empty size means "default"
    auto s = driver.Mount(Vol(), {{"size", size}});
    EXPECT_TRUE(s.IsFailure()) << size;
  }
  EXPECT_TRUE(mounter.mounts.empty());
  EXPECT_TRUE(driver.Mount(Vol(), {{"size", "64m"}}).IsSuccess());
}

TEST_F(TmpfsDriverTest, RelativePathsAreRefused) {
  EXPECT_TRUE(driver.Mount("relative/dir", {}).IsFailure());
  EXPECT_TRUE(driver.Unmount("relative/dir").IsFailure());
}

TEST_F(TmpfsDriverTest, UnmountOfMissingOrUnmountedDirSucceeds) {
  EXPECT_TRUE(driver.Unmount(dir.Join("missing")).IsSuccess());
  std::filesystem::create_directories(Vol());
  EXPECT_TRUE(driver.Unmount(Vol()).IsSuccess());
}

TEST_F(TmpfsDriverTest, UnmountRemovesStackedMounts) {
  std::filesystem::create_directories(Vol());
  mounter.mounts.push_back({"flexkit-tmpfs", Vol(), "tmpfs", "rw", false});
  mounter.mounts.push_back({"flexkit-tmpfs", Vol(), "tmpfs", "rw", false});
  EXPECT_TRUE(driver.Unmount(Vol()).IsSuccess());
  EXPECT_TRUE(mounter.mounts.empty());
}

TEST_F(TmpfsDriverTest, UnmountLeavesForeignMountsAlone) {
  std::filesystem::create_directories(Vol());
  mounter.mounts.push_back({"/dev/sda1", Vol(), "ext4", "rw", false});
  EXPECT_TRUE(driver.Unmount(Vol()).IsFailure());
  EXPECT_EQ(mounter.mounts.size(), 1u);
}

TEST_F(TmpfsDriverTest, InitAsksForNodeExpansion) {
  auto s = driver.Init();
  ASSERT_TRUE(s.capabilities);
  EXPECT_TRUE(s.capabilities->requires_fs_resize);
}

TEST_F(TmpfsDriverTest, ExpandFsRemountsOurTmpfsWithTheNewSizeKeepingReadOnly) {
  ASSERT_TRUE(driver.Mount(Vol(), {{"kubernetes.io/readwrite", "ro"}}).IsSuccess());
  EXPECT_TRUE(driver.ExpandFs({}, "", Vol(), 2u << 30, 1u << 30).IsSuccess());
  ASSERT_EQ(mounter.mounts.size(), 1u) << "a remount changes the mount, it does not stack one";
  EXPECT_TRUE(mounter.mounts[0].read_only);
  EXPECT_EQ(mounter.mounts[0].options, "ro,size=2147483648");
}

TEST_F(TmpfsDriverTest, ExpandFsRefusesWhatIsNotOurs) {
  EXPECT_TRUE(driver.ExpandFs({}, "", Vol(), 2u << 30, 1u << 30).IsFailure()) << "nothing mounted";
  mounter.mounts.push_back({"/dev/sda1", Vol(), "ext4", "rw", false});
  auto s = driver.ExpandFs({}, "", Vol(), 2u << 30, 1u << 30);
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("no flexkit-tmpfs volume"));
  EXPECT_EQ(mounter.mounts[0].options, "rw") << "a foreign mount is left alone";
}

TEST_F(TmpfsDriverTest, MounterErrorsAreReported) {
  mounter.fail_with = "read /proc/self/mountinfo: boom";
  auto s = driver.Mount(Vol(), {});
  EXPECT_TRUE(s.IsFailure());
  EXPECT_THAT(s.message, HasSubstr("boom"));
}

// The real binary, in a private mount namespace of its own (unshare), so
// nothing it mounts can outlive the test.
class TmpfsBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
  // Runs `script` under sh in a private mount namespace; $D is the driver,
  // $T a fresh directory.
  ProcessResult InNamespace(const std::string& script) {
    return RunProcess({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                       "D=\"$0\"; T=\"$1\"; " + script,
                       BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), dir.path()});
  }
  TempDir dir;
};

TEST_F(TmpfsBinaryTest, ReadOnlyMountRejectsWrites) {
  ProcessResult r = InNamespace(
      "\"$D\" mount \"$T/v\" '{\"kubernetes.io/readwrite\":\"ro\"}' || exit 10; "
      "grep -q \" $T/v ro,\" /proc/self/mountinfo || exit 11; "
      "if touch \"$T/v/x\" 2>/dev/null; then exit 12; fi; "
      "\"$D\" unmount \"$T/v\" >/dev/null || exit 13; "
      "grep -q \" $T/v \" /proc/self/mountinfo && exit 14; exit 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TmpfsBinaryTest, FullCycleTwiceLeavesNothingMounted) {
  ProcessResult r = InNamespace(
      "for i in 1 2; do "
      "\"$D\" mount \"$T/v\" '{}' >/dev/null || exit 10; "
      "\"$D\" mount \"$T/v\" '{}' >/dev/null || exit 11; "
      "echo data > \"$T/v/file\" || exit 12; "
      "[ $(grep -c \" $T/v \" /proc/self/mountinfo) = 1 ] || exit 13; "
      "\"$D\" unmount \"$T/v\" >/dev/null || exit 14; "
      "\"$D\" unmount \"$T/v\" >/dev/null || exit 15; "
      "[ -z \"$(ls -A \"$T/v\")\" ] || exit 16; "
      "done; grep -q \" $T/v \" /proc/self/mountinfo && exit 17; exit 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TmpfsBinaryTest, ExpandFsGrowsTheMountedTmpfsAndKeepsItsData) {
  ProcessResult r = InNamespace(
      "\"$D\" mount \"$T/v\" '{\"size\":\"1m\"}' >/dev/null || exit 10; "
      "echo data > \"$T/v/file\" || exit 11; "
      "[ $(stat -f -c '%b' \"$T/v\") -le 256 ] || exit 12; "
      "\"$D\" expandfs '{}' '' \"$T/v\" 4194304 1048576 >/dev/null || exit 13; "
      "\"$D\" expandfs '{}' '' \"$T/v\" 4194304 1048576 >/dev/null || exit 14; "
      "[ $(stat -f -c '%b' \"$T/v\") -ge 1024 ] || exit 15; "
      "[ \"$(cat \"$T/v/file\")\" = data ] || exit 16; "
      "[ $(grep -c \" $T/v \" /proc/self/mountinfo) = 1 ] || exit 17; "
      "\"$D\" unmount \"$T/v\" >/dev/null || exit 18; exit 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

std::vector<std::string> UnshareArgv() {
  std::vector<std::string> argv = {"/usr/bin/unshare", "--mount", "--propagation", "private"};
  if (geteuid() != 0) argv.push_back("--map-root-user");
  return argv;
}

// Whether this machine lets the test unshare a mount namespace, asked once
// with /bin/true, so a driver run that dies (a signal, the deadline, no
// reply) is never mistaken for a machine that cannot run the property.
bool UnsharePermitted(std::string* why) {
  auto argv = UnshareArgv();
  argv.push_back("/bin/true");
  const ProcessResult r = RunProcess(argv);
  *why = r.err;
  return r.term_signal == 0 && !r.timed_out && r.exit_code == 0;
}

// For any argv, the sample driver prints exactly one JSON document whose
// status is one of the three, and the exit code agrees with it; a driver
// that dies of a signal or hits the deadline fails the property.
TEST(TmpfsBinaryProperty, AnyArgvGetsOneWellFormedReply) {
  std::string why;
  if (!UnsharePermitted(&why)) GTEST_SKIP() << "unshare is not permitted here: " << why;
  static TempDir dir;
  EXPECT_TRUE(rc::check("any argv gets one well-formed reply", [] {
    const std::vector<std::string> verbs = {
        "init",         "getvolumename", "attach",        "detach", "waitforattach",
        "isattached",   "mountdevice",   "unmountdevice", "mount",  "unmount",
        "expandvolume", "expandfs",      "bogus",         ""};
    const auto arg = rc::gen::oneOf(
        rc::gen::map(rc::gen::arbitrary<std::string>(),
                     [](std::string s) { return (!s.empty() && s[0] == '/') ? "x" + s : s; }),
        rc::gen::map(rc::gen::arbitrary<std::map<std::string, std::string>>(),
                     [](const std::map<std::string, std::string>& m) {
                       return nlohmann::json(m).dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace);
                     }),
        rc::gen::element<std::string>(R"({"kubernetes.io/readwrite":"ro"})",
                                      R"({"kubernetes.io/secret/p":"###"})", R"({"size":1})", "{",
                                      ""),
        rc::gen::map(rc::gen::inRange(0, 4),
                     [](int i) { return dir.Join("vol" + std::to_string(i)); }));
    std::vector<std::string> argv = {BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"),
                                     *rc::gen::elementOf(verbs)};
    const auto rest = *rc::gen::container<std::vector<std::string>>(*rc::gen::inRange(0, 6), arg);
    argv.insert(argv.end(), rest.begin(), rest.end());
    // Strings with NUL cannot be argv elements.
    for (auto& a : argv) a.erase(std::remove(a.begin(), a.end(), '\0'), a.end());

    std::vector<std::string> wrapped = UnshareArgv();
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    flexkit::testing::RunOptions options;
    options.working_dir = dir.path();
    options.deadline = std::chrono::seconds(20);
    ProcessResult r = RunProcess(wrapped, options);
    RC_ASSERT(!r.timed_out);
    RC_ASSERT(r.term_signal == 0);
    RC_ASSERT(r.err.empty());
    RC_ASSERT(!r.out.empty());
    RC_ASSERT(r.out.back() == '\n');
    RC_ASSERT(r.out.find('\n') == r.out.size() - 1);
    const auto reply = nlohmann::json::parse(r.out);
    const std::string status = reply.at("status");
    RC_ASSERT(status == "Success" || status == "Failure" || status == "Not supported");
    RC_ASSERT(r.exit_code == (status == "Failure" ? 1 : 0));
  }));
}

}  // namespace
