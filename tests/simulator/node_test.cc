// A node: its own mount namespace, crash and restart, nothing left behind.
#include "simulator/node.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "simulator/boost_process_runner.h"
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

TEST_F(SimulatorNode, CreatesKubeletRootAndPluginDir) {
  Node node("n1", run_.path());
  EXPECT_EQ(node.kubelet_root(), run_.path() + "/nodes/n1/var/lib/kubelet");
  EXPECT_TRUE(std::filesystem::is_directory(node.kubelet_root()));
  EXPECT_TRUE(std::filesystem::is_directory(node.plugin_dir()));
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
  spec.mount_namespace_fd = node.mount_namespace_fd();
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
