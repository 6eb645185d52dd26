// The VFS rules of driver/README.md ("VFS volumes: shared directories"), in
// process, on two nodes and on both APIs. Each node has its own driver,
// stateDir and mount table (a FakeMounter: its mount namespace); their
// daemons answer as Convoy's vfs driver does (reference answers: the volume
// record {Path, MountPoint} lives on the shared vfs path, so every daemon
// reads and writes the same one; stock refuses a caller's mount point and
// records the volume's own directory; PR #161's BindMount binds the
// directory at the caller's path and, with ReMount, first unmounts a
// previous mount point that is mounted on that daemon's host). kubelet's
// global path is the same on both nodes, as on a real cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <map>
#include <memory>

#include "driver/convoy/convoy_driver.h"
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

// What every daemon on the shared vfs path reads: one record per volume.
struct SharedVfsPath {
  struct Record {
    std::string path, mount_point;
  };
  std::map<std::string, Record> records;
};

// One node's Convoy daemon with the vfs driver, answering as v0.5.2
// (`stock`) or with PR #161's extensions. Mounts land in its node's table.
class VfsDaemon final : public ConvoyClient {
 public:
  VfsDaemon(std::string node, SharedVfsPath* shared, FakeMounter* mounts, bool stock)
      : node_(std::move(node)), shared_(shared), mounts_(mounts), stock_(stock) {}

  std::string Endpoint() const override { return "convoy on " + node_; }
  VolumeInfo Create(const CreateRequest& r) override {
    if (shared_->records.count(r.name))
      throw ConvoyError("Volume " + r.name + " already exists", 500);
    shared_->records[r.name] = {"/vfs/" + r.name, ""};
    return *Inspect(r.name);
  }
  std::optional<VolumeInfo> Inspect(const std::string& name) override {
    auto it = shared_->records.find(name);
    if (it == shared_->records.end()) return std::nullopt;
    VolumeInfo v;
    v.name = name;
    v.driver = "vfs";
    v.mount_point = it->second.mount_point;
    v.driver_info = {{"Path", it->second.path}, {"MountPoint", it->second.mount_point}};
    return v;
  }
  std::map<std::string, VolumeInfo> List() override {
    std::map<std::string, VolumeInfo> out;
    for (const auto& [name, record] : shared_->records) out[name] = *Inspect(name);
    return out;
  }
  std::string Mount(const MountRequest& r) override {
    auto& v = Existing(r.volume_name);
    if (r.bind_mount.empty() || stock_) {
      if (!r.mount_point.empty())
        throw ConvoyError("POST /v1/volumes/mount: 400 VFS doesn't support specified mount point",
                          400);
      return v.mount_point = v.path;
    }
    const bool previous_bound = !v.mount_point.empty() && v.mount_point != v.path;
    if (v.mount_point == r.mount_point && Mounted(r.mount_point)) return r.mount_point;
    std::string err;
    if (previous_bound && v.mount_point != r.mount_point && Mounted(v.mount_point)) {
      if (!r.remount) throw ConvoyError("Volume " + r.volume_name + " was already mounted", 500);
      mounts_->Unmount(v.mount_point, &err);
    }
    mounts_->Mount(v.path, r.mount_point, "", 0, "", &err);
    if (r.read_write == "ro")
      mounts_->Mount("", r.mount_point, "", MS_REMOUNT | MS_RDONLY, "", &err);
    return v.mount_point = r.mount_point;
  }
  void Umount(const std::string& name) override {
    auto& v = Existing(name);
    std::string err;
    if (!stock_ && !v.mount_point.empty() && v.mount_point != v.path && Mounted(v.mount_point))
      mounts_->Unmount(v.mount_point, &err);
    v.mount_point.clear();
  }
  bool Delete(const std::string& name, bool) override {
    auto it = shared_->records.find(name);
    if (it == shared_->records.end()) return false;
    if (!it->second.mount_point.empty())
      throw ConvoyError("Cannot delete volume " + name + ". It is still mounted", 500);
    shared_->records.erase(it);
    return true;
  }
  ApiProbe ProbeApi() override { return {}; }
  std::string DaemonInstance() const override { return ""; }

 private:
  SharedVfsPath::Record& Existing(const std::string& name) {
    auto it = shared_->records.find(name);
    if (it == shared_->records.end()) throw ConvoyError("volume " + name + " doesn't exist", 400);
    return it->second;
  }
  bool Mounted(const std::string& dir) const {
    for (const auto& m : mounts_->mounts)
      if (m.target == dir) return true;
    return false;
  }
  std::string node_;
  SharedVfsPath* shared_;
  FakeMounter* mounts_;
  bool stock_;
};

// The daemon behind each socket; a node's daemon that is not there
// (stopped, partitioned) fails every request, as a connect would.
class VfsDaemons final : public ConvoyClientFactory {
 public:
  std::unique_ptr<ConvoyClient> ForSocket(const std::string& socket) override {
    return std::make_unique<Forward>(this, socket);
  }
  std::map<std::string, std::unique_ptr<VfsDaemon>> daemons;

 private:
  class Forward final : public ConvoyClient {
   public:
    Forward(VfsDaemons* all, std::string socket) : all_(all), socket_(std::move(socket)) {}
    std::string Endpoint() const override { return "convoy at " + socket_; }
    VolumeInfo Create(const CreateRequest& r) override { return D().Create(r); }
    std::optional<VolumeInfo> Inspect(const std::string& n) override { return D().Inspect(n); }
    std::map<std::string, VolumeInfo> List() override { return D().List(); }
    std::string Mount(const MountRequest& r) override { return D().Mount(r); }
    void Umount(const std::string& n) override { D().Umount(n); }
    bool Delete(const std::string& n, bool ref) override { return D().Delete(n, ref); }
    ApiProbe ProbeApi() override { return D().ProbeApi(); }
    std::string DaemonInstance() const override { return ""; }

   private:
    VfsDaemon& D() {
      auto it = all_->daemons.find(socket_);
      if (it == all_->daemons.end()) throw ConvoyError("connect " + socket_ + ": no answer", 0);
      return *it->second;
    }
    VfsDaemons* all_;
    std::string socket_;
  };
};

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
    daemons_.daemons[SocketOf(name)] =
        std::make_unique<VfsDaemon>(name, &shared_, &n->mounts, GetParam() == Api::kStock);
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

  SharedVfsPath shared_;
  VfsDaemons daemons_;
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
  EXPECT_TRUE(shared_.records.count("pv-1")) << "the shared reference was deleted";
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
  const auto before = shared_.records.at("pv-1").mount_point;
  DriverStatus s = On("node-b").UnmountDevice(kGlobal);
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_TRUE(Mounted("node-a"));
  EXPECT_EQ(shared_.records.at("pv-1").mount_point, before);
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
  auto daemon_a = std::move(daemons_.daemons.at(SocketOf("node-a")));
  daemons_.daemons.erase(SocketOf("node-a"));  // partitioned
  BringUp("node-b");
  // node-a's teardown needs nothing from its daemon: it is its own mount.
  DriverStatus s = On("node-a").UnmountDevice(kGlobal);
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_FALSE(Mounted("node-a"));
  daemons_.daemons[SocketOf("node-a")] = std::move(daemon_a);  // back
  s = On("node-a").Detach("pv-1", "node-a");
  EXPECT_TRUE(s.IsSuccess()) << s.message;
  EXPECT_FALSE(Attached("node-a"));

  EXPECT_TRUE(Mounted("node-b"));
  EXPECT_TRUE(Attached("node-b"));
  ASSERT_TRUE(shared_.records.count("pv-1"));
  if (GetParam() == Api::kExtended) {
    EXPECT_EQ(shared_.records.at("pv-1").mount_point, kGlobal) << "node-b's mark was cleared";
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
  const auto mark = shared_.records.at("pv-1").mount_point;
  TakeDown("node-a");
  EXPECT_FALSE(Mounted("node-a"));
  EXPECT_TRUE(Mounted("node-b"));
  EXPECT_TRUE(Attached("node-b"));
  EXPECT_EQ(shared_.records.at("pv-1").mount_point, mark);
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
  daemons_.daemons.erase(SocketOf("node-a"));
  EXPECT_FALSE(On("node-a").IsAttached(Opts(), "node-a").IsSuccess());
}

INSTANTIATE_TEST_SUITE_P(BothApis, VfsSharing, ::testing::Values(Api::kExtended, Api::kStock),
                         [](const auto& api) { return std::string(ApiName(api.param)); });

}  // namespace
}  // namespace convoy_flexvolume
