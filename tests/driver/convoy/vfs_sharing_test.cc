// The VFS rules of driver/README.md ("VFS volumes: shared directories"), in
// process, on two nodes and on both APIs. Each node has its own driver,
// stateDir and mount table (a FakeMounter: its mount namespace); their
// daemons are FakeConvoyDaemons, which answer as Convoy's vfs driver does
// (the volume record {Path, MountPoint} lives on the shared vfs path, so
// every daemon reads and writes the same one; stock refuses a caller's mount
// point and records the volume's own directory; PR #161's BindMount binds
// the directory at the caller's path and, with ReMount, first unmounts a
// previous mount point that is mounted on that daemon's host). kubelet's
// global path is the same on both nodes, as on a real cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "driver/convoy/convoy_driver.h"
#include "tests/driver/convoy/fake_convoy_daemon.h"
#include "tests/driver/convoy/mock_convoy_client.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using flexvolume::DriverStatus;
using flexvolume::FakeMounter;
using flexvolume::Options;
using ::testing::HasSubstr;

constexpr const char* kPath = "/vfs/pv-1";  // the volume's directory on the shared path
constexpr const char* kGlobal = "/var/lib/kubelet/plugins/kubernetes.io/flexvolume/mounts/pv-1";

std::string SocketOf(const std::string& node) { return "/run/convoy/" + node + ".sock"; }

class VfsSharing : public ::testing::TestWithParam<Api> {
 protected:
  // A node: its daemon on the shared path, its mount table, its stateDir.
  struct Node {
    FakeMounter mounts;
    flexkit::testing::TempDir state;
    FakeClock clock;
    FakeDevices devices;
    Config config;
  };

  Node& Start(const std::string& name) {
    auto& n = nodes_[name];
    if (!n) n = std::make_unique<Node>();
    n->config.socket = SocketOf(name);
    n->config.socket_template = "/run/convoy/{node}.sock";
    n->config.state_dir = n->state.path();
    n->config.api = GetParam();
    daemons_.Start(SocketOf(name), "i-" + name, &n->mounts, GetParam());
    return *n;
  }
  // The driver as kubelet on `name` runs it.
  ConvoyDriver On(const std::string& name) {
    Node& n = *nodes_.at(name);
    return ConvoyDriver(n.config, "", DriverDeps{&daemons_, &n.mounts, &n.clock, &n.devices});
  }
  static Options Opts() {
    return {{"convoyDriver", "vfs"},
            {"kubernetes.io/fsType", "ext4"},
            {"kubernetes.io/pvOrVolumeName", "pv-1"},
            {"kubernetes.io/readwrite", "rw"}};
  }
  bool Mounted(const std::string& node) const {
    for (const auto& m : nodes_.at(node)->mounts.mounts)
      if (m.target == kGlobal && m.source == kPath) return true;
    return false;
  }
  bool Attached(const std::string& node) {
    DriverStatus s = On(node).IsAttached(Opts(), node);
    EXPECT_TRUE(s.IsSuccess()) << s.message;
    return s.attached.value_or(false);
  }
  // kubelet's attach, waitforattach and mountdevice on `node`.
  void BringUp(const std::string& node) {
    DriverStatus s = On(node).Attach(Opts(), node);
    ASSERT_TRUE(s.IsSuccess()) << node << ": " << s.message;
    EXPECT_EQ(s.device, kPath);
    nodes_.at(node)->devices.present.insert(kPath);
    s = On(node).WaitForAttach(kPath, Opts());
    ASSERT_TRUE(s.IsSuccess()) << node << ": " << s.message;
    s = On(node).MountDevice(kGlobal, kPath, Opts());
    ASSERT_TRUE(s.IsSuccess()) << node << ": " << s.message;
    ASSERT_TRUE(Mounted(node)) << node;
  }
  // kubelet's unmountdevice and detach on `node`, each a Success.
  void TakeDown(const std::string& node) {
    DriverStatus s = On(node).UnmountDevice(kGlobal);
    EXPECT_TRUE(s.IsSuccess()) << node << ": " << s.message;
    s = On(node).Detach("pv-1", node);
    EXPECT_TRUE(s.IsSuccess()) << node << ": " << s.message;
  }

  FakeConvoyDaemons daemons_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;
};

// A second node may attach and mount a volume another node has: a shared
// directory (RWX). isattached answers for the node asked, from its own
// record, though every node's daemon sees the volume.
TEST_P(VfsSharing, ASecondNodesAttachSharesTheVolume) {
  Start("node-a");
  Start("node-b");
  Start("node-c");
  BringUp("node-a");
  BringUp("node-b");
  EXPECT_TRUE(Mounted("node-a")) << "node-b's mount touched node-a's";
  EXPECT_TRUE(Attached("node-a"));
  EXPECT_TRUE(Attached("node-b"));
  EXPECT_FALSE(Attached("node-c")) << "its daemon sees the volume, but it was never attached there";
}

// kubelet may detach on a node that has nothing (a stale record, a retry):
// that drops nothing of another node's, and the shrunk sequence of issue
// 32 (attach on b, detach on a, mountdevice on b) works.
TEST_P(VfsSharing, DetachOnANodeThatDoesNotHaveItTouchesNoOtherNode) {
  Start("node-a");
  Start("node-b");
  ASSERT_TRUE(On("node-b").Attach(Opts(), "node-b").IsSuccess());
  DriverStatus s = On("node-a").Detach("pv-1", "node-a");
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_TRUE(daemons_.vfs_path.records.count("pv-1")) << "the shared reference was deleted";
  EXPECT_TRUE(Attached("node-b"));
  s = On("node-b").MountDevice(kGlobal, kPath, Opts());
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_TRUE(Mounted("node-b"));
}

// unmountdevice on a node where the volume is not mounted is a Success that
// unmounts nothing anywhere and leaves the shared record as it was.
TEST_P(VfsSharing, UnmountDeviceOnANodeThatDoesNotOwnTheMountTouchesNothing) {
  Start("node-a");
  Start("node-b");
  BringUp("node-a");
  const auto before = daemons_.vfs_path.records.at("pv-1").mount_point;
  DriverStatus s = On("node-b").UnmountDevice(kGlobal);
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_TRUE(Mounted("node-a"));
  EXPECT_EQ(daemons_.vfs_path.records.at("pv-1").mount_point, before);
  // A mount at that path on node-b that is not node-b's VFS mount is never
  // taken for the volume.
  nodes_.at("node-b")->mounts.mounts.push_back({"/dev/sda1", kGlobal, "ext4", "rw", false});
  s = On("node-b").UnmountDevice(kGlobal);
  EXPECT_FALSE(s.IsSuccess());
  EXPECT_EQ(nodes_.at("node-b")->mounts.mounts.size(), 1u) << "a foreign mount was unmounted";
  EXPECT_TRUE(Mounted("node-a"));
}

// The pod moves from node-a (partitioned, its daemon unreachable) to
// node-b; node-a comes back and kubelet tears its copy down. That removes
// node-a's mount and record only: node-b keeps its mount, its attachment
// and the shared record, and tears down cleanly afterwards.
TEST_P(VfsSharing, TheReturningOwnersTeardownNeverDisturbsTheNewOwner) {
  Start("node-a");
  Start("node-b");
  BringUp("node-a");
  daemons_.At(SocketOf("node-a")).fault = FakeConvoyDaemon::Fault::kDown;  // partitioned
  BringUp("node-b");
  // node-a's teardown needs nothing from its daemon: it is its own mount.
  DriverStatus s = On("node-a").UnmountDevice(kGlobal);
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_FALSE(Mounted("node-a"));
  daemons_.At(SocketOf("node-a")).fault = FakeConvoyDaemon::Fault::kNone;  // back
  s = On("node-a").Detach("pv-1", "node-a");
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_FALSE(Attached("node-a"));

  EXPECT_TRUE(Mounted("node-b"));
  EXPECT_TRUE(Attached("node-b"));
  ASSERT_TRUE(daemons_.vfs_path.records.count("pv-1"));
  if (GetParam() == Api::kExtended) {
    EXPECT_EQ(daemons_.vfs_path.records.at("pv-1").mount_point, kGlobal)
        << "node-b's mark was cleared";
  }
  TakeDown("node-b");
  EXPECT_FALSE(Mounted("node-b"));
  EXPECT_FALSE(Attached("node-b"));
}

// The same once node-a's daemon answers again before its teardown: the
// daemon's record (MountPoint naming kubelet's path, the same path on every
// node) still names node-b's mount, and node-a never acts on it.
TEST_P(VfsSharing, TheReturningOwnersTeardownWithItsDaemonBackLeavesTheSharedRecord) {
  Start("node-a");
  Start("node-b");
  BringUp("node-a");
  BringUp("node-b");
  const auto mark = daemons_.vfs_path.records.at("pv-1").mount_point;
  TakeDown("node-a");
  EXPECT_FALSE(Mounted("node-a"));
  EXPECT_TRUE(Mounted("node-b"));
  EXPECT_TRUE(Attached("node-b"));
  EXPECT_EQ(daemons_.vfs_path.records.at("pv-1").mount_point, mark);
  BringUp("node-a");  // and it may take the volume again
  EXPECT_TRUE(Mounted("node-b"));
}

// A node that crashed lost its mounts but kept its stateDir: its teardown
// forgets the lost mount and does not take a mount made there since for it.
TEST_P(VfsSharing, ATeardownAfterACrashForgetsTheLostMountOnly) {
  Start("node-a");
  BringUp("node-a");
  nodes_.at("node-a")->mounts.mounts.clear();  // rebooted
  TakeDown("node-a");
  EXPECT_FALSE(Attached("node-a"));
  nodes_.at("node-a")->mounts.mounts.push_back({"/dev/sda1", kGlobal, "ext4", "rw", false});
  EXPECT_THAT(On("node-a").UnmountDevice(kGlobal).message, HasSubstr("no volume of"));
}

// isattached never says "false" because a daemon did not answer.
TEST_P(VfsSharing, IsAttachedWithAnUnreachableDaemonIsAFailure) {
  Start("node-a");
  BringUp("node-a");
  daemons_.At(SocketOf("node-a")).fault = FakeConvoyDaemon::Fault::kDown;
  EXPECT_FALSE(On("node-a").IsAttached(Opts(), "node-a").IsSuccess());
}

INSTANTIATE_TEST_SUITE_P(BothApis, VfsSharing, ::testing::Values(Api::kExtended, Api::kStock),
                         [](const auto& api) { return std::string(ApiName(api.param)); });

}  // namespace
}  // namespace convoy_flexvolume
