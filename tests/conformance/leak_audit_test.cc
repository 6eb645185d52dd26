// The host half of the leak audit on real loop devices and processes: a
// loop device left over a file of the run dir is found even when the run
// dir is named through a symlink and after the case dir was removed, and
// what a case leaves elsewhere is attributed by its marks.
#include "conformance/leak_audit.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "simulator/node.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;
using flexkit::testing::RunProcess;

// Until `pid` runs `command` (its argv, NUL-joined): a background job of
// `sh -c` has its pid before it has exec'd, and only the exec gives it the
// environment (FLEXCONFORM_CASE_DIR) and the argv the audit reads.
void WaitForExec(pid_t pid, const std::string& command) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string argv =
        flexkit::testing::ReadFileText("/proc/" + std::to_string(pid) + "/cmdline");
    if (argv.rfind(command, 0) == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  FAIL() << "pid " << pid << " did not exec " << command << " within 10 s";
}

TEST(LeakAudit, FindsALoopDeviceWhoseBackingFileWasDeleted) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("leak-audit");
  fs::create_directories(dir.Join("real/run/1"));
  fs::create_directory_symlink(dir.Join("real"), dir.Join("link"));
  const std::string run_dir = dir.Join("link/run");
  const std::string file = run_dir + "/1/vol.img";
  std::ofstream(file).close();
  fs::resize_file(file, 1 << 20);

  const HostSnapshot before = TakeHostSnapshot(run_dir);
  auto attached = RunProcess({"/usr/sbin/losetup", "--find", "--show", file});
  ASSERT_EQ(attached.exit_code, 0) << attached.err;
  const std::string loop = attached.out.substr(0, attached.out.find('\n'));
  fs::remove_all(run_dir + "/1");  // as the runner removes a case dir
  const auto leaks = CompareHost(before, TakeHostSnapshot(run_dir));
  const auto found = LoopDevicesUnder(run_dir);
  RunProcess({"/usr/sbin/losetup", "--detach", loop});

  ASSERT_EQ(leaks.size(), 1u) << ::testing::PrintToString(leaks);
  EXPECT_NE(leaks[0].find("loop device left"), std::string::npos) << leaks[0];
  EXPECT_NE(leaks[0].find("(deleted)"), std::string::npos) << leaks[0];
  EXPECT_EQ(found, std::vector<std::string>{loop});
}

// Anywhere on the host: a loop device over a file outside the run dir is
// the case's when the file carries the case's unique prefix, and is
// reclaimed; one carrying another run's prefix is never touched.
TEST(LeakAudit, AttributesHostLoopDevicesByTheCasePrefixAndReclaimsThem) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir run("leak-audit-run");
  flexkit::testing::TempDir elsewhere("leak-audit-elsewhere");
  const std::string ours = elsewhere.Join("vol-r77777c3-1.img");
  const std::string theirs = elsewhere.Join("vol-r88888c3-1.img");
  for (const auto& f : {ours, theirs}) {
    std::ofstream(f).close();
    fs::resize_file(f, 1 << 20);
  }
  const HostSnapshot before = TakeHostSnapshot(run.path());
  auto a = RunProcess({"/usr/sbin/losetup", "--find", "--show", ours});
  auto b = RunProcess({"/usr/sbin/losetup", "--find", "--show", theirs});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string loop_a = a.out.substr(0, a.out.find('\n'));
  const std::string loop_b = b.out.substr(0, b.out.find('\n'));
  const auto leaks =
      FindHostLeaks(before, TakeHostSnapshot(run.path()), {run.Join("3"), "r77777c3"});
  const auto lines = ReclaimHostLeaks(leaks);
  // Released at once, or (another process, a test's losetup --find or
  // udev's blkid, had it open) by the kernel's deferred detach.
  const bool released = LoopReleased(loop_a, ours);
  const auto other = RunProcess({"/usr/sbin/losetup", "-j", theirs});
  RunProcess({"/usr/sbin/losetup", "--detach", loop_b});

  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  EXPECT_NE(lines[0].find(ours), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("(reclaimed)"), std::string::npos) << lines[0];
  EXPECT_TRUE(released) << loop_a << " still backs " << ours;
  EXPECT_NE(other.out.find(theirs), std::string::npos);
}

// Cases of one run overlap (-j): a loop device over a file in a sibling
// case's dir is that case's, never this one's.
TEST(LeakAudit, ASiblingCasesLoopDeviceIsNotTheCases) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir run("leak-audit-run");
  fs::create_directories(run.Join("3"));
  fs::create_directories(run.Join("4"));
  const std::string sibling = run.Join("4/disk.img");
  std::ofstream(sibling).close();
  fs::resize_file(sibling, 1 << 20);
  const HostSnapshot before = TakeHostSnapshot(run.path());
  auto a = RunProcess({"/usr/sbin/losetup", "--find", "--show", sibling});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string loop = a.out.substr(0, a.out.find('\n'));
  const HostSnapshot after = TakeHostSnapshot(run.path());
  const auto case3 = FindHostLeaks(before, after, {run.Join("3"), "r1c3"});
  const auto case4 = FindHostLeaks(before, after, {run.Join("4"), "r1c4"});
  RunProcess({"/usr/sbin/losetup", "--detach", loop});
  EXPECT_TRUE(case3.empty()) << case3.front().what;
  ASSERT_EQ(case4.size(), 1u);
  EXPECT_EQ(case4[0].id, loop);
}

// losetup -d of a device another process has open defers the detach to
// its close: released once that happens, never while it is still held.
TEST(LeakAudit, ADeferredLoopDetachIsReleasedOnceTheLastOpenerCloses) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("leak-audit-deferred");
  const std::string file = dir.Join("disk.img");
  std::ofstream(file).close();
  fs::resize_file(file, 1 << 20);
  auto a = RunProcess({"/usr/sbin/losetup", "--find", "--show", file});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string loop = a.out.substr(0, a.out.find('\n'));
  const std::string backing = fs::canonical(file).string();
  const int held = ::open(loop.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  EXPECT_FALSE(LoopReleased(loop, backing, std::chrono::milliseconds(0))) << "still attached";
  ASSERT_EQ(RunProcess({"/usr/sbin/losetup", "--detach", loop}).exit_code, 0);
  EXPECT_FALSE(LoopReleased(loop, backing, std::chrono::milliseconds(100))) << "still held open";
  std::thread closer([held] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::close(held);
  });
  EXPECT_TRUE(LoopReleased(loop, backing, std::chrono::seconds(5)));
  closer.join();
}

// A process the case's driver left, reparented away from flexconform, is
// found by the FLEXCONFORM_CASE_DIR in its environment and killed.
TEST(LeakAudit, FindsAndKillsAProcessCarryingTheCaseDir) {
  flexkit::testing::TempDir run("leak-audit-run");
  const HostSnapshot before = TakeHostSnapshot(run.path());
  auto started = RunProcess({"/bin/sh", "-c",
                             "FLEXCONFORM_CASE_DIR=" + run.Join("5") +
                                 " setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!"});
  const pid_t pid = static_cast<pid_t>(std::stol(started.out));
  WaitForExec(pid, std::string("sleep\0", 6));
  const auto leaks = FindHostLeaks(before, TakeHostSnapshot(run.path()), {run.Join("5"), "r1c5"});
  const auto lines = ReclaimHostLeaks(leaks);
  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("pid " + std::to_string(pid)), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("(reclaimed)"), std::string::npos) << lines[0];
  EXPECT_FALSE(
      fs::exists("/proc/" + std::to_string(pid) + "/cmdline") &&
      RunProcess({"/bin/sh", "-c", "grep -q '^State:.Z' /proc/" + std::to_string(pid) + "/status"})
              .exit_code != 0);
}

// A leaked driver process is named by its argv, but not by its options:
// kubelet puts the secrets there.
TEST(LeakAudit, ALeftProcessIsNamedWithoutItsJsonOptions) {
  flexkit::testing::TempDir run("leak-audit-run");
  const HostSnapshot before = TakeHostSnapshot(run.path());
  const std::string options = R"({"kubernetes.io/secret/password":"aHVudGVyMg=="})";
  auto started = RunProcess({"/bin/sh", "-c",
                             "FLEXCONFORM_CASE_DIR=" + run.Join("5") +
                                 " setsid sh -c 'sleep 300; :' driver mount /pod '" + options +
                                 "' >/dev/null 2>&1 </dev/null & echo $!"});
  const pid_t pid = static_cast<pid_t>(std::stol(started.out));
  WaitForExec(pid, std::string("sh\0-c\0sleep 300; :\0", 19));
  const auto leaks = FindHostLeaks(before, TakeHostSnapshot(run.path()), {run.Join("5"), "r1c5"});
  const std::string all = ::testing::PrintToString(ReclaimHostLeaks(leaks));
  EXPECT_NE(all.find("pid " + std::to_string(pid) + " sh -c sleep 300; : driver mount /pod {...}"),
            std::string::npos)
      << all;
  EXPECT_EQ(all.find("aHVudGVyMg"), std::string::npos) << all;
}

// A process of the node's namespace that is still exiting when the audit
// looks (a FUSE daemon whose mount just went) is not left behind; one that
// stays is, by its command line.
TEST(LeakAudit, ANodeProcessExitingWithinTheGraceIsNotLeftOneThatStaysIs) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir run("leak-audit-node");
  sim::Node node("node-1", run.path());
  const std::string in_node =
      "/usr/bin/nsenter --target " + std::to_string(node.holder_pid()) + " --mount -- ";
  auto start = [&](const std::string& command) {
    auto r =
        RunProcess({"/bin/sh", "-c", in_node + command + " >/dev/null 2>&1 </dev/null & echo $!"});
    const auto pid = static_cast<pid_t>(std::stol(r.out));
    for (int i = 0; i < 500; ++i) {  // until nsenter has entered the namespace
      auto in = node.ProcessesInNamespace();
      if (std::find(in.begin(), in.end(), pid) != in.end()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return pid;
  };
  const pid_t exits = start("sleep 0.3");
  auto in = node.ProcessesInNamespace();
  ASSERT_NE(std::find(in.begin(), in.end(), exits), in.end()) << "the process runs in the node";
  EXPECT_TRUE(CompareNode(node, {}, {}, {}).empty());

  const pid_t stays = start("sleep 30");
  const auto leaks = CompareNode(node, {}, {}, {});
  ::kill(stays, SIGKILL);
  ASSERT_EQ(leaks.size(), 1u) << ::testing::PrintToString(leaks);
  EXPECT_NE(leaks[0].find("process left in the namespace"), std::string::npos) << leaks[0];
  EXPECT_NE(leaks[0].find("sleep 30"), std::string::npos) << leaks[0];
}

// Scratch-place entries the test makes in /tmp, removed whatever the audit
// did; the prefix is this process's, so a parallel test's files are not ours.
class ScratchFiles {
 public:
  ScratchFiles() : prefix_("r" + std::to_string(::getpid()) + "s") {}
  ~ScratchFiles() {
    std::error_code ec;
    for (const auto& p : made_) fs::remove_all(p, ec);
  }
  const std::string& prefix() const { return prefix_; }
  std::string Make(const std::string& name, const std::string& content = "") {
    const std::string path = "/tmp/" + name;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << content;
    made_.push_back(fs::path("/tmp") / fs::path(name).begin()->string());
    return path;
  }

 private:
  std::string prefix_;
  std::vector<std::string> made_;
};

// A credentials file named for the volume, and a clone in a dir the driver
// made for all its volumes, are the case's by their names, and removed;
// what carries no case's name is the run's to report, not the case's.
TEST(LeakAudit, AScratchEntryNamedForTheCaseIsLeftAndRemoved) {
  flexkit::testing::TempDir run("leak-audit-run");
  ScratchFiles files;
  const std::string p = files.prefix();
  const HostSnapshot before = TakeHostSnapshot(run.path());
  const std::string cred = files.Make("flexkit-cred-vol-" + p + "-1");
  const std::string clone = files.Make("flexkit-clones-" + p + "/vol-" + p + "-2/HEAD", "ref");
  const std::string log = files.Make("flexkit-driver-" + p + ".log", "mounted vol-" + p + "-1");
  const HostSnapshot after = TakeHostSnapshot(run.path());
  const auto leaks = FindHostLeaks(before, after, {run.Join("5"), p});
  std::set<std::string> ids;
  for (const auto& l : leaks) ids.insert(l.id);
  EXPECT_EQ(ids, (std::set<std::string>{cred, fs::path(clone).parent_path().string()}));
  const auto lines = ReclaimHostLeaks(leaks);
  for (const auto& line : lines) EXPECT_NE(line.find("(reclaimed)"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(cred));
  EXPECT_FALSE(fs::exists(fs::path(clone).parent_path()));
  // The run's note: what bears the run's marks (the log holds a volume's
  // name; the clones dir is named for the run), not another program's.
  const std::string other = files.Make("flexkit-other-program." + std::to_string(::getpid()));
  const auto left = ScratchEntriesAdded(before, TakeHostSnapshot(run.path()), {"-" + p});
  EXPECT_NE(std::find(left.begin(), left.end(), log), left.end()) << ::testing::PrintToString(left);
  EXPECT_NE(std::find(left.begin(), left.end(), "/tmp/flexkit-clones-" + p), left.end());
  EXPECT_EQ(std::find(left.begin(), left.end(), cred), left.end());
  EXPECT_EQ(std::find(left.begin(), left.end(), other), left.end());
}

// A credentials file under a random name is the case's when it holds a
// secret only the case sent; it may be a log other cases write too, so it
// is reported and kept.
TEST(LeakAudit, AFileHoldingTheCasesOwnSecretIsLeftAndKept) {
  flexkit::testing::TempDir run("leak-audit-run");
  ScratchFiles files;
  const std::string p = files.prefix();
  const HostSnapshot before = TakeHostSnapshot(run.path());
  const std::string creds = files.Make("flexkit-creds." + p + "XyZ12", "password=pw-" + p + "-7\n");
  files.Make("flexkit-other." + p, "password=someone-else's\n");
  CaseMarks marks{run.Join("5"), p, {"pw-" + p + "-7"}, {}};
  const auto leaks = FindHostLeaks(before, TakeHostSnapshot(run.path()), marks);
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0].id, creds);
  const auto lines = ReclaimHostLeaks(leaks);
  EXPECT_NE(lines[0].find("holding a secret the case sent"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("(left:"), std::string::npos) << lines[0];
  EXPECT_TRUE(fs::exists(creds));
}

// What the profile's volume options name (an image per volume, a share's
// dir) is the backend's data, which outlives the volume's teardown.
TEST(LeakAudit, APathTheProfileNamesIsTheBackendsNotALeak) {
  flexkit::testing::TempDir run("leak-audit-run");
  ScratchFiles files;
  const std::string p = files.prefix();
  const HostSnapshot before = TakeHostSnapshot(run.path());
  files.Make("flexkit-images-" + p + "/vol-" + p + "-1.img");
  files.Make("flexkit-share-" + p + "/vol-" + p + "-2/data");
  CaseMarks marks{run.Join("5"),
                  p,
                  {},
                  {"/tmp/flexkit-images-" + p + "/{{unique}}.img", "/tmp/flexkit-share-" + p}};
  EXPECT_TRUE(FindHostLeaks(before, TakeHostSnapshot(run.path()), marks).empty());
}

}  // namespace
}  // namespace flexkit::conform
