// A node: its own mount and UTS namespaces, crash and restart, nothing left behind.
#include "simulator/node.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simulator/boost_process_runner.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

std::string OurMounts() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SimulatorNode : public ::testing::Test {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
  flexkit::testing::TempDir run_{"flexsim-node"};
};

// The plugin dir is left to kubelet's prober, which makes it (Init's MkdirAll).
TEST_F(SimulatorNode, CreatesKubeletRootAndLeavesThePluginDirToKubelet) {
  Node node("n1", run_.path());
  EXPECT_EQ(node.kubelet_root(), run_.path() + "/nodes/n1/var/lib/kubelet");
  EXPECT_TRUE(std::filesystem::is_directory(node.kubelet_root()));
  EXPECT_EQ(node.plugin_dir(),
            run_.path() + "/nodes/n1/usr/libexec/kubernetes/kubelet-plugins/volume/exec");
  EXPECT_FALSE(std::filesystem::exists(node.plugin_dir()));
}

TEST_F(SimulatorNode, MountsAreVisibleOnlyInsideTheNode) {
  Node node("n1", run_.path());
  std::string target = node.kubelet_root() + "/m";
  node.filesystem().MakeDirs(target, 0750);
  node.filesystem().Mount("tmpfs", target, "tmpfs", 0, "size=1m");
  EXPECT_TRUE(node.filesystem().IsMountPoint(target));
  EXPECT_EQ(OurMounts().find(target), std::string::npos);
  node.filesystem().WriteFile(target + "/f", "data");
  EXPECT_EQ(node.filesystem().ReadFile(target + "/f"), "data");
  EXPECT_FALSE(std::filesystem::exists(target + "/f"));  // on the node's tmpfs only
  node.filesystem().Unmount(target);
  EXPECT_FALSE(node.filesystem().IsMountPoint(target));
}

// As inside the namespace: rmdir of a mount point is EBUSY, never a silent
// detach of the node's mount (which rmdir from outside would do).
TEST_F(SimulatorNode, RemovingAMountPointFailsAndKeepsTheMount) {
  Node node("n1", run_.path());
  std::string target = node.kubelet_root() + "/m";
  node.filesystem().MakeDirs(target, 0750);
  node.filesystem().Mount("tmpfs", target, "tmpfs", 0, "size=1m");
  node.filesystem().WriteFile(target + "/f", "data");
  try {
    node.filesystem().RemoveDir(target);
    ADD_FAILURE() << "rmdir of a mount point succeeded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("busy"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(node.filesystem().IsMountPoint(target));
  EXPECT_EQ(node.filesystem().ReadFile(target + "/f"), "data");
  node.filesystem().Unmount(target);
  node.filesystem().RemoveDir(target);
  EXPECT_FALSE(node.filesystem().PathExists(target));
}

TEST_F(SimulatorNode, CrashKillsEverythingInTheNamespaceAndItsMounts) {
  Node node("n1", run_.path());
  std::string target = node.kubelet_root() + "/m";
  node.filesystem().MakeDirs(target, 0750);
  node.filesystem().Mount("tmpfs", target, "tmpfs", 0, "");
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.args = {"-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo started"};
  spec.namespace_fd = node.namespace_fd();
  ProcessResult r = BoostProcessRunner().Run(spec);
  ASSERT_TRUE(r.exit.ok()) << r.combined;
  ASSERT_EQ(node.ProcessesInNamespace().size(), 1u);  // the daemon, in its own session
  pid_t holder = node.holder_pid();
  node.Crash();
  EXPECT_FALSE(node.running());
  EXPECT_NE(::kill(holder, 0), 0);
  node.Restart();
  EXPECT_TRUE(node.ProcessesInNamespace().empty());
  EXPECT_FALSE(node.filesystem().IsMountPoint(target));
  EXPECT_TRUE(std::filesystem::is_directory(target));  // same disk
}

std::string HostnameSeenOn(Node& node, const std::string& hostname = "") {
  ProcessSpec spec;
  spec.executable = "/bin/hostname";
  spec.namespace_fd = node.namespace_fd();
  spec.hostname = hostname;
  ProcessResult r = BoostProcessRunner().Run(spec);
  EXPECT_TRUE(r.exit.ok()) << r.combined;
  return r.combined;
}

std::string OurHostname() {
  char name[HOST_NAME_MAX + 1] = {};
  EXPECT_EQ(::gethostname(name, sizeof name - 1), 0);
  return std::string(name) + "\n";
}

// Each node is a host of its own name, as in a real cluster: a driver that
// locks by `hostname` must see two nodes as two hosts. The harness's own
// hostname is untouched, and so is a node's after a restart.
TEST_F(SimulatorNode, ProcessesOnANodeSeeItsNameAsTheirHostname) {
  const std::string ours = OurHostname();
  Node a("node-1", run_.path());
  Node b("node-2", run_.path());
  EXPECT_EQ(HostnameSeenOn(a), "node-1\n");
  EXPECT_EQ(HostnameSeenOn(b), "node-2\n");
  a.Restart();
  EXPECT_EQ(HostnameSeenOn(a), "node-1\n");
  EXPECT_EQ(OurHostname(), ours);
}

// A controller's call made on a node's mounts sees the control plane's
// hostname; the node and the harness keep theirs.
TEST_F(SimulatorNode, AProcessGivenAHostnameSeesItOnTheNodesMounts) {
  const std::string ours = OurHostname();
  Node a("node-1", run_.path());
  EXPECT_EQ(HostnameSeenOn(a, kControlPlaneName), std::string(kControlPlaneName) + "\n");
  EXPECT_EQ(HostnameSeenOn(a), "node-1\n");
  EXPECT_EQ(OurHostname(), ours);
}

// On a live node the real backend knows the machine by its real name.
TEST_F(SimulatorNode, ALiveNodeKeepsTheHostsHostname) {
  Node live("node-1", run_.path(), {},
            std::make_unique<ProcessNamespaceHolder>(NodeHostname::kHost));
  EXPECT_EQ(HostnameSeenOn(live), OurHostname());
}

const MountEntry* TopmostAt(const MountTable& table, const std::string& target) {
  const MountEntry* found = nullptr;
  for (const auto& m : *table)
    if (m.target == target) found = &m;
  return found;
}

// The node's table is read again only when the kernel flags a change,
// whoever made it: the harness, a remount, or a process in the namespace.
TEST_F(SimulatorNode, MountTableIsReadAgainOnlyAfterAMountChange) {
  Node node("n1", run_.path());
  const std::string target = node.kubelet_root() + "/m";
  node.filesystem().MakeDirs(target, 0750);
  const MountTable first = node.Mounts();
  EXPECT_EQ(node.Mounts().get(), first.get());  // unchanged: the same table, not re-read
  EXPECT_EQ(TopmostAt(first, target), nullptr);

  node.filesystem().Mount("tmpfs", target, "tmpfs", 0, "size=1m");
  const MountTable mounted = node.Mounts();
  EXPECT_NE(mounted.get(), first.get());
  ASSERT_NE(TopmostAt(mounted, target), nullptr);
  EXPECT_EQ(TopmostAt(mounted, target)->options.rfind("rw", 0), 0u);
  EXPECT_EQ(node.Mounts().get(), mounted.get());

  node.filesystem().Mount("", target, "", MS_BIND | MS_REMOUNT | MS_RDONLY, "");
  ASSERT_NE(TopmostAt(node.Mounts(), target), nullptr);
  EXPECT_EQ(TopmostAt(node.Mounts(), target)->options.rfind("ro", 0), 0u);

  ProcessSpec spec;
  spec.executable = "/bin/umount";
  spec.args = {target};
  spec.namespace_fd = node.namespace_fd();
  ASSERT_TRUE(BoostProcessRunner().Run(spec).exit.ok());
  EXPECT_EQ(TopmostAt(node.Mounts(), target), nullptr);
  EXPECT_FALSE(node.filesystem().IsMountPoint(target));
}

// The open mountinfo holds the namespace: a crash must close it, or the
// namespace and its mounts outlive every process (a device stays busy
// and a failover could not mount it elsewhere).
TEST_F(SimulatorNode, CrashReleasesTheMountsTheTableWasWatching) {
  const std::string image = run_.path() + "/disk.img";
  { std::ofstream(image).close(); }
  ASSERT_EQ(::truncate(image.c_str(), 16 << 20), 0);
  ASSERT_EQ(flexkit::testing::RunProcess({"/sbin/mkfs.ext4", "-q", image}).exit_code, 0);
  auto attach = flexkit::testing::RunProcess({"/sbin/losetup", "--find", "--show", image});
  ASSERT_EQ(attach.exit_code, 0) << attach.err;
  const std::string device = attach.out.substr(0, attach.out.find('\n'));
  struct Detach {
    std::string device;
    ~Detach() { flexkit::testing::RunProcess({"/sbin/losetup", "-d", device}); }
  } detach{device};

  Node node("n1", run_.path());
  const std::string target = node.kubelet_root() + "/disk";
  node.filesystem().MakeDirs(target, 0750);
  node.filesystem().Mount(device, target, "ext4", 0, "");
  ASSERT_NE(TopmostAt(node.Mounts(), target), nullptr);  // the table is being watched
  auto busy = [&] {
    const int fd = ::open(device.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    return fd < 0 && errno == EBUSY;
  };
  EXPECT_TRUE(busy());  // mounted: the filesystem claims the device
  node.Crash();
  EXPECT_TRUE(node.Mounts()->empty());
  EXPECT_FALSE(busy()) << "the crashed node's mount outlived its namespace";
}

TEST_F(SimulatorNode, OperationsOnACrashedNodeSayItIsDown) {
  Node node("n1", run_.path());
  node.Crash();
  try {
    node.filesystem().IsMountPoint("/x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node n1: node is down"), std::string::npos) << e.what();
  }
}

TEST_F(SimulatorNode, MountErrorsSayWhatWhereAndWhy) {
  Node node("n1", run_.path());
  try {
    node.filesystem().Mount("/nonexistent-source", node.kubelet_root() + "/missing", "", MS_BIND,
                            "");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mount /nonexistent-source on "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace flexkit::sim
