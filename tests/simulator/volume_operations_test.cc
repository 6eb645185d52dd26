// kubelet's volume operations (simulator/volume_operations.h) in process:
// an in-memory node (FakeNodeFilesystem) and scripted driver replies
// (FakeProcessRunner), each test one rule of the Kubernetes function the
// operation follows. No root, no processes, no sleeps.
#include "simulator/volume_operations.h"

#include <gtest/gtest.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

ProcessResult OpsSuccess(const std::string& extra = "") {
  return FakeProcessRunner::Reply(R"({"status":"Success")" + extra + "}");
}
ProcessResult OpsNotSupported() {
  return FakeProcessRunner::Reply(R"({"status":"Not supported"})");
}
ProcessResult OpsFailure(const std::string& why) {
  return FakeProcessRunner::Reply(R"({"status":"Failure","message":")" + why + "\"}", 1);
}

// Runs each call through a DriverInvoker over the scripted runner.
class OpsInvokerCaller : public DriverCaller {
 public:
  explicit OpsInvokerCaller(DriverInvoker& invoker) : invoker_(invoker) {}
  CallResult Call(const DriverCall& call) override {
    components.push_back(call.component);
    return invoker_.Call(call.node, ComponentName(call.component), "/plugins/k8s~fake/fake",
                         call.args, call.redactor);
  }
  std::vector<Component> components;

 private:
  DriverInvoker& invoker_;
};

// Every call and action the operations report, as "call VERB" and
// "ACTION PATH".
class OpsLog : public VolumeObserver {
 public:
  void DriverCalled(const DriverCall& call, const CallResult&) override {
    entries.push_back("call " + call.args.at(0));
  }
  void KubeletActed(const Node&, const KubeletAction& a) override {
    entries.push_back(std::string(ActionName(a.kind)) + " " + a.path);
  }
  std::vector<std::string> entries;
};

class SimulatorVolumeOperations : public ::testing::Test {
 protected:
  SimulatorVolumeOperations() {
    node_ = FakeNodeFilesystem::MakeNode("node-1", run_.path());
    spec_.name = "data";
    spec_.driver = "k8s/fake";
    pod_.pod_name = "p";
    pod_.pod_namespace = "default";
    pod_.pod_uid = "uid-p";
    // A driver that mounts for real on the fake node.
    replies_["waitforattach"] = [](const ProcessSpec& s) {
      return OpsSuccess(R"(,"device":")" + s.args.at(1) + "\"");
    };
    replies_["mountdevice"] = [this](const ProcessSpec& s) {
      fs().Mount(s.args.at(2), s.args.at(1), "ext4", 0, "");
      return OpsSuccess();
    };
    replies_["mount"] = [this](const ProcessSpec& s) {
      fs().Mount("tmpfs", s.args.at(1), "tmpfs", 0, "");
      return OpsSuccess();
    };
    replies_["unmount"] = [this](const ProcessSpec& s) {
      fs().Unmount(s.args.at(1));
      return OpsSuccess();
    };
    replies_["unmountdevice"] = [this](const ProcessSpec& s) {
      fs().Unmount(s.args.at(1));
      return OpsSuccess();
    };
    ops_.SetUnmountRetry({3, std::chrono::milliseconds(0)});
  }

  FakeNodeFilesystem& fs() { return FakeNodeFilesystem::Of(*node_); }
  std::string PodDir() const {
    return KubeletPaths(node_->kubelet_root(), "k8s/fake").PodVolumeDir("uid-p", "data");
  }
  std::string Global() const {
    return KubeletPaths(node_->kubelet_root(), "k8s/fake").DeviceMountPath("data");
  }
  std::vector<std::string> Verbs() const {
    std::vector<std::string> verbs;
    for (const auto& s : runner_.specs()) verbs.push_back(s.args.at(0));
    return verbs;
  }
  std::vector<std::string> ArgsOf(const std::string& verb) const {
    for (const auto& s : runner_.specs()) {
      if (s.args.at(0) == verb) return s.args;
    }
    return {};
  }

  flexkit::testing::TempDir run_{"flexsim-volume-ops"};
  std::map<std::string, FakeProcessRunner::Responder> replies_;
  FakeProcessRunner runner_{[this](const ProcessSpec& spec) {
    auto it = replies_.find(spec.args.at(0));
    return it == replies_.end() ? OpsNotSupported() : it->second(spec);
  }};
  Transcript transcript_;
  DriverInvoker invoker_{runner_, transcript_};
  OpsInvokerCaller caller_{invoker_};
  OpsLog log_;
  VolumeOperations ops_{FindProfile("current"), caller_, &log_};
  std::unique_ptr<Node> node_;
  VolumeSpec spec_;
  MountExtras pod_;
};

// --- MountVolume (operation_generator.go GenerateMountVolumeFunc) ---------

TEST_F(SimulatorVolumeOperations, MountVolumeWaitsNamesMountsTheDeviceThenThePod) {
  MountResult m = ops_.MountVolume(*node_, spec_, pod_, true, "/dev/fake0", false, true);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(Verbs(),
            (std::vector<std::string>{"waitforattach", "getvolumename", "mountdevice", "mount"}));
  EXPECT_EQ(ArgsOf("mountdevice").at(1), Global());
  EXPECT_EQ(ArgsOf("mountdevice").at(2), "/dev/fake0");
  EXPECT_TRUE(fs().IsMountPoint(Global()));
  EXPECT_TRUE(fs().IsMountPoint(PodDir()));
}

TEST_F(SimulatorVolumeOperations, MountVolumeWaitsAndNamesEvenWhenTheDeviceIsMounted) {
  MountResult m = ops_.MountVolume(*node_, spec_, pod_, true, "/dev/fake0", true, true);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"waitforattach", "getvolumename", "mount"}));
}

TEST_F(SimulatorVolumeOperations, MountVolumeOfANonAttachableVolumeOnlyMounts) {
  MountResult m = ops_.MountVolume(*node_, spec_, pod_, false, "", false, true);
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"mount"}));
}

TEST_F(SimulatorVolumeOperations, MountVolumeStopsAtAFailedWaitForAttach) {
  replies_["waitforattach"] = [](const ProcessSpec&) { return OpsFailure("no device"); };
  MountResult m = ops_.MountVolume(*node_, spec_, pod_, true, "", false, true);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.failed(), &m.wait_for_attach);
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"waitforattach"}));
}

TEST_F(SimulatorVolumeOperations, WaitForAttachNotSupportedKeepsTheDevicePath) {
  replies_.erase("waitforattach");
  Step w = ops_.WaitForAttach(*node_, spec_, "/dev/fake0");
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE(w.fallback);
  EXPECT_EQ(w.device, "/dev/fake0");
}

// --- MountDevice (attacher.go MountDevice, attacher-defaults.go) ----------

TEST_F(SimulatorVolumeOperations, MountDeviceIsNotCalledOnAMountPoint) {
  fs().MakeDirs(Global(), 0750);
  fs().Mount("/dev/other", Global(), "ext4", 0, "");
  Step md = ops_.MountDevice(*node_, spec_, "/dev/fake0");
  EXPECT_TRUE(md.ok());
  EXPECT_FALSE(md.call.has_value());
  EXPECT_NE(md.skipped.find("already a mount point"), std::string::npos) << md.skipped;
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename"}));
}

TEST_F(SimulatorVolumeOperations, MountDeviceNotSupportedFormatsAndMountsTheDevice) {
  replies_.erase("mountdevice");
  spec_.fs_type = "xfs";
  Step md = ops_.MountDevice(*node_, spec_, "/dev/fake0");
  EXPECT_TRUE(md.ok()) << md.error;
  EXPECT_TRUE(md.fallback);
  EXPECT_EQ(fs().formatted_devices()["/dev/fake0"], "xfs");
  EXPECT_TRUE(fs().IsMountPoint(Global()));
}

TEST_F(SimulatorVolumeOperations, MountDeviceNotSupportedWithoutADeviceDoesNothing) {
  replies_.erase("mountdevice");
  Step md = ops_.MountDevice(*node_, spec_, "");
  EXPECT_TRUE(md.ok());
  EXPECT_TRUE(fs().formatted_devices().empty());
  EXPECT_FALSE(fs().IsMountPoint(Global()));
}

TEST_F(SimulatorVolumeOperations, MountDeviceFailsWhenGetVolumeNameFails) {
  replies_["getvolumename"] = [](const ProcessSpec&) { return OpsFailure("no name"); };
  Step md = ops_.MountDevice(*node_, spec_, "/dev/fake0");
  EXPECT_FALSE(md.ok());
  EXPECT_EQ(md.failed_verb, "getvolumename");
  ASSERT_TRUE(md.failed_call.has_value());
  EXPECT_FALSE(md.call.has_value());  // mountdevice itself never ran
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename"}));
}

// --- SetUp (mounter.go SetUpAt, mounter-defaults.go SetUpAt) --------------

TEST_F(SimulatorVolumeOperations, SetUpNotSupportedBindsTheDeviceMountPathReadOnly) {
  replies_.erase("mount");
  spec_.read_only = true;
  fs().MakeDirs(Global(), 0750);
  fs().Mount("/dev/fake0", Global(), "ext4", 0, "");
  Step m = ops_.SetUp(*node_, spec_, pod_, true);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_TRUE(m.fallback);
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"mount", "getvolumename"}));
  EXPECT_THROW(fs().WriteFile(PodDir() + "/x", "x"), FilesystemError);
  const auto& ops = fs().operations();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "mount " + Global() + " " + PodDir()), ops.end());
}

TEST_F(SimulatorVolumeOperations, SetUpFailureRemovesThePodDir) {
  replies_["mount"] = [](const ProcessSpec&) { return OpsFailure("refused"); };
  Step m = ops_.SetUp(*node_, spec_, pod_, true);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.failed_verb, "mount");
  EXPECT_FALSE(fs().PathExists(PodDir()));
}

TEST_F(SimulatorVolumeOperations, SetUpWithAnUnreadableSecretFailsWithoutCallingTheDriver) {
  pod_.secret_error = "Cannot get secret of type k8s/fake (default/s)";
  Step m = ops_.SetUp(*node_, spec_, pod_, true);
  EXPECT_EQ(m.error, pod_.secret_error);
  EXPECT_TRUE(Verbs().empty());
  EXPECT_FALSE(fs().PathExists(PodDir()));
}

TEST_F(SimulatorVolumeOperations, SetUpIsNotCalledOnAMountPoint) {
  fs().MakeDirs(PodDir(), 0750);
  fs().Mount("tmpfs", PodDir(), "tmpfs", 0, "");
  Step m = ops_.SetUp(*node_, spec_, pod_, true);
  EXPECT_TRUE(m.ok());
  EXPECT_TRUE(Verbs().empty());
}

TEST_F(SimulatorVolumeOperations, SetUpChangesOwnershipOnlyWithTheCapability) {
  pod_.fs_group = 4242;
  ASSERT_TRUE(ops_.SetUp(*node_, spec_, pod_, false).ok());
  EXPECT_NE(fs().GroupOf(PodDir()), 4242);
  ASSERT_TRUE(ops_.TearDown(*node_, spec_, pod_.pod_uid).ok());
  ASSERT_TRUE(ops_.SetUp(*node_, spec_, pod_, true).ok());
  EXPECT_EQ(fs().GroupOf(PodDir()), 4242);
}

// --- TearDown (unmounter.go TearDownAt, unmounter-defaults.go) ------------

TEST_F(SimulatorVolumeOperations, TearDownOfAMissingDirCallsNothing) {
  Step t = ops_.TearDown(*node_, spec_, pod_.pod_uid);
  EXPECT_TRUE(t.ok());
  EXPECT_FALSE(t.skipped.empty());
  EXPECT_TRUE(Verbs().empty());
}

TEST_F(SimulatorVolumeOperations, TearDownCallsUnmountOnAnUnmountedDirAndRemovesIt) {
  fs().MakeDirs(PodDir(), 0750);
  replies_["unmount"] = [](const ProcessSpec&) { return OpsSuccess(); };
  Step t = ops_.TearDown(*node_, spec_, pod_.pod_uid);
  EXPECT_TRUE(t.ok()) << t.error;
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"unmount"}));
  EXPECT_FALSE(fs().PathExists(PodDir()));
}

TEST_F(SimulatorVolumeOperations, TearDownToleratesADriverThatRemovedTheDir) {
  fs().MakeDirs(PodDir(), 0750);
  replies_["unmount"] = [this](const ProcessSpec& s) {
    fs().RemoveDir(s.args.at(1));
    return OpsSuccess();
  };
  EXPECT_TRUE(ops_.TearDown(*node_, spec_, pod_.pod_uid).ok());
}

TEST_F(SimulatorVolumeOperations, TearDownNotSupportedUnmountsRetryingABusyMount) {
  fs().MakeDirs(PodDir(), 0750);
  fs().Mount("tmpfs", PodDir(), "tmpfs", 0, "");
  replies_.erase("unmount");
  fs().InjectError("unmount", PodDir(), EBUSY, 2);
  Step t = ops_.TearDown(*node_, spec_, pod_.pod_uid);
  EXPECT_TRUE(t.ok()) << t.error;
  EXPECT_TRUE(t.fallback);
  EXPECT_FALSE(fs().PathExists(PodDir()));
}

TEST_F(SimulatorVolumeOperations, TearDownFailureKeepsTheDir) {
  fs().MakeDirs(PodDir(), 0750);
  replies_["unmount"] = [](const ProcessSpec&) { return OpsFailure("busy"); };
  Step t = ops_.TearDown(*node_, spec_, pod_.pod_uid);
  EXPECT_EQ(t.failed_verb, "unmount");
  EXPECT_TRUE(fs().PathExists(PodDir()));
}

// --- UnmountDevice (GenerateUnmountDeviceFunc, detacher.go) ---------------

TEST_F(SimulatorVolumeOperations, UnmountDeviceNamesTheVolumeThenUnmountsAndRemoves) {
  fs().MakeDirs(Global(), 0750);
  fs().Mount("/dev/fake0", Global(), "ext4", 0, "");
  Step u = ops_.UnmountDevice(*node_, spec_);
  EXPECT_TRUE(u.ok()) << u.error;
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename", "unmountdevice"}));
  EXPECT_FALSE(fs().PathExists(Global()));
}

TEST_F(SimulatorVolumeOperations, UnmountDeviceOfANonMountPointOnlyRemovesThePath) {
  fs().MakeDirs(Global(), 0750);
  Step u = ops_.UnmountDevice(*node_, spec_);
  EXPECT_TRUE(u.ok());
  EXPECT_NE(u.skipped.find("already unmounted"), std::string::npos) << u.skipped;
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename"}));
  EXPECT_FALSE(fs().PathExists(Global()));
}

// --- the controller's operations -----------------------------------------

TEST_F(SimulatorVolumeOperations, DetachNamesTheVolumeAndSendsItsSpecName) {
  replies_["detach"] = [](const ProcessSpec&) { return OpsSuccess(); };
  Step d = ops_.Detach(*node_, Component::kController, spec_, "node-2");
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename", "detach"}));
  EXPECT_EQ(ArgsOf("detach"), (std::vector<std::string>{"detach", "data", "node-2"}));
  EXPECT_EQ(caller_.components,
            (std::vector<Component>{Component::kController, Component::kController}));
}

TEST_F(SimulatorVolumeOperations, DetachIsNotMadeWhenGetVolumeNameFails) {
  replies_["getvolumename"] = [](const ProcessSpec&) { return OpsFailure("no name"); };
  Step d = ops_.Detach(*node_, Component::kController, spec_, "node-1");
  EXPECT_EQ(d.failed_verb, "getvolumename");
  EXPECT_EQ(Verbs(), (std::vector<std::string>{"getvolumename"}));
}

TEST_F(SimulatorVolumeOperations, AttachNotSupportedAttachesWithNoDevice) {
  Step a = ops_.Attach(*node_, Component::kController, spec_, "node-1");
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(a.fallback);
  EXPECT_EQ(a.device, "");
}

TEST_F(SimulatorVolumeOperations, IsAttachedNotSupportedCountsAsAttached) {
  Step is = ops_.IsAttached(*node_, Component::kController, spec_, "node-1");
  EXPECT_TRUE(is.ok());
  EXPECT_TRUE(is.attached);
}

// --- the observer ---------------------------------------------------------

TEST_F(SimulatorVolumeOperations, TheObserverSeesEveryCallAndActionInOrder) {
  replies_.erase("mount");
  ASSERT_TRUE(ops_.MountVolume(*node_, spec_, pod_, true, "/dev/fake0", false, true).ok());
  EXPECT_EQ(log_.entries, (std::vector<std::string>{
                              "call waitforattach", "call getvolumename", "mkdir " + Global(),
                              "call mountdevice", "mkdir " + PodDir(), "call mount",
                              "call getvolumename", "bind mount " + PodDir()}));
}

}  // namespace
}  // namespace flexkit::sim
