// kubelet's volume-manager rules (DESIGN §5.3, reference §5-§7) in process:
// an in-memory node (FakeNodeFilesystem) and a scripted driver
// (FakeProcessRunner) whose mount verbs change that node's mount table as
// a real driver would. No root, no processes, no sleeps.
#include "simulator/kubelet.h"

#include <gtest/gtest.h>
#include <sys/mount.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

using Responder = FakeProcessRunner::Responder;

ProcessResult Success(const std::string& extra = "") {
  return FakeProcessRunner::Reply(R"({"status":"Success")" + extra + "}");
}
ProcessResult NotSupported() { return FakeProcessRunner::Reply(R"({"status":"Not supported"})"); }
ProcessResult Failure(const std::string& why) {
  return FakeProcessRunner::Reply(R"({"status":"Failure","message":")" + why + "\"}", 1);
}

class SimulatorKubeletRules : public ::testing::Test {
 protected:
  SimulatorKubeletRules() {
    node_ = FakeNodeFilesystem::MakeNode("node-1", run_.path());
    std::filesystem::create_directories(node_->plugin_dir() + "/k8s~fake");
    std::ofstream(node_->plugin_dir() + "/k8s~fake/fake") << "";
    state_.node_status["node-1"].controller_managed_attach = false;
    // A driver that mounts for real (on the fake node): mountdevice mounts
    // the device at the global path, mount a tmpfs at the pod dir.
    replies_["init"] = [this](const ProcessSpec&) {
      return Success(std::string(R"(,"capabilities":{"attach":)") + (attach_ ? "true" : "false") +
                     "}");
    };
    replies_["attach"] = [](const ProcessSpec&) { return Success(R"(,"device":"/dev/fake0")"); };
    // Given "" (after a kubelet restart), it looks the device up.
    replies_["waitforattach"] = [](const ProcessSpec& s) {
      return Success(R"(,"device":")" + (s.args.at(1).empty() ? "/dev/fake0" : s.args.at(1)) +
                     "\"");
    };
    replies_["mountdevice"] = [this](const ProcessSpec& s) {
      fs().Mount(s.args.at(2), s.args.at(1), "ext4", 0, "");
      return Success();
    };
    replies_["mount"] = [this](const ProcessSpec& s) {
      fs().Mount("tmpfs", s.args.at(1), "tmpfs", 0, "");
      return Success();
    };
    replies_["unmount"] = [this](const ProcessSpec& s) {
      fs().Unmount(s.args.at(1));
      return Success();
    };
    replies_["unmountdevice"] = [this](const ProcessSpec& s) {
      fs().Unmount(s.args.at(1));
      return Success();
    };
    replies_["detach"] = [](const ProcessSpec&) { return Success(); };
    replies_["getvolumename"] = [](const ProcessSpec&) { return NotSupported(); };
  }

  FakeNodeFilesystem& fs() { return FakeNodeFilesystem::Of(*node_); }

  Kubelet& kubelet() {
    if (!kubelet_)
      kubelet_ =
          std::make_unique<Kubelet>(*node_, state_, invoker_, FindProfile("current"), transcript_);
    return *kubelet_;
  }

  // An inline volume `data` of driver k8s/fake in pod `name`.
  void AddPod(const std::string& name, bool read_only = false, const std::string& fs_type = "") {
    Pod pod;
    pod.name = name;
    pod.uid = "uid-" + name;
    pod.node = "node-1";
    PodVolume v;
    v.name = "data";
    v.flex = FlexSource{"k8s/fake", fs_type, read_only, {}, "", ""};
    pod.volumes.push_back(v);
    state_.pods[ClusterState::Key("default", name)] = pod;
  }
  void DeletePod(const std::string& name) { state_.pods.erase(ClusterState::Key("default", name)); }

  std::string PodDir(const std::string& pod) const {
    return KubeletPaths(node_->kubelet_root(), "k8s/fake").PodVolumeDir("uid-" + pod, "data");
  }
  std::string Global() const {
    return KubeletPaths(node_->kubelet_root(), "k8s/fake").DeviceMountPath("data");
  }
  // The arguments of the last execution of `verb`.
  std::vector<std::string> LastArgs(const std::string& verb) const {
    std::vector<std::string> last;
    for (const auto& s : runner_.specs()) {
      if (s.args.at(0) == verb) last = s.args;
    }
    return last;
  }
  // Driver executions of `verb` (not answers from the Not-supported cache).
  int Runs(const std::string& verb) const {
    int n = 0;
    for (const auto& s : runner_.specs()) n += s.args.at(0) == verb;
    return n;
  }
  const MountEntry* MountAt(const std::string& target) {
    static MountEntry found;
    for (const auto& m : fs().Mounts()) {
      if (m.target == target) {
        found = m;
        return &found;
      }
    }
    return nullptr;
  }
  bool Did(const std::string& operation) const {
    const auto& ops = FakeNodeFilesystem::Of(*node_).operations();
    return std::find(ops.begin(), ops.end(), operation) != ops.end();
  }

  flexkit::testing::TempDir run_{"flexsim-kubelet"};
  bool attach_ = true;
  std::map<std::string, Responder> replies_;
  FakeProcessRunner runner_{[this](const ProcessSpec& spec) {
    auto it = replies_.find(spec.args.at(0));
    return it == replies_.end() ? NotSupported() : it->second(spec);
  }};
  Transcript transcript_;
  DriverInvoker invoker_{runner_, transcript_};
  ClusterState state_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<Kubelet> kubelet_;
};

// --- prepare-for-mount ---------------------------------------------------

TEST_F(SimulatorKubeletRules, PodDirIsCreatedBeforeTheDriversMount) {
  bool dir_existed = false;
  replies_["mount"] = [&](const ProcessSpec& s) {
    dir_existed = fs().PathExists(s.args.at(1)) && !fs().IsMountPoint(s.args.at(1));
    fs().Mount("tmpfs", s.args.at(1), "tmpfs", 0, "");
    return Success();
  };
  AddPod("p");
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_TRUE(dir_existed);
  EXPECT_TRUE(Did("mkdir " + PodDir("p")));
  EXPECT_EQ(kubelet().PodsWithVolume("data"), std::set<std::string>{"uid-p"});
}

TEST_F(SimulatorKubeletRules, PodDirAlreadyAMountPointSkipsTheMountCall) {
  fs().MakeDirs(PodDir("p"), 0750);
  fs().Mount("tmpfs", PodDir("p"), "tmpfs", 0, "");
  attach_ = false;
  AddPod("p");
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("mount"), 0);
  EXPECT_EQ(kubelet().PodsWithVolume("data"), std::set<std::string>{"uid-p"});
}

TEST_F(SimulatorKubeletRules, GlobalPathAlreadyMountedSkipsMountDevice) {
  fs().MakeDirs(Global(), 0750);
  fs().Mount("/dev/fake0", Global(), "ext4", 0, "");
  AddPod("p");
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("mountdevice"), 0);
  EXPECT_TRUE(kubelet().DeviceMounted("data"));
}

TEST_F(SimulatorKubeletRules, FailedMountRemovesThePodDir) {
  replies_["mount"] = [](const ProcessSpec&) { return Failure("backend down"); };
  attach_ = false;
  AddPod("p");
  auto errors = kubelet().Sync();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("backend down"), std::string::npos) << errors[0];
  EXPECT_FALSE(fs().PathExists(PodDir("p")));
  EXPECT_TRUE(kubelet().PodsWithVolume("data").empty());
}

// --- Not-supported fallbacks, one row each --------------------------------

struct FallbackRow {
  const char* name;
  const char* verb;  // answered Not supported
  bool read_only = false;
  const char* fs_type = "";
  bool device_formatted = false;
};

class SimulatorKubeletFallback : public SimulatorKubeletRules,
                                 public ::testing::WithParamInterface<FallbackRow> {};

TEST_P(SimulatorKubeletFallback, KubeletDoesTheVerbItself) {
  const FallbackRow& row = GetParam();
  replies_[row.verb] = [](const ProcessSpec&) { return NotSupported(); };
  if (row.device_formatted) fs().formatted_devices()["/dev/fake0"] = "xfs";
  AddPod("p", row.read_only, row.fs_type);
  ASSERT_TRUE(kubelet().Sync().empty());
  const std::string verb = row.verb;
  if (verb == "mount") {
    const MountEntry* m = MountAt(PodDir("p"));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->source, "/dev/fake0");  // the bind shows the global path's device
    EXPECT_TRUE(Did("mount " + Global() + " " + PodDir("p")));
    EXPECT_EQ(m->options.rfind(row.read_only ? "ro" : "rw", 0), 0u) << m->options;
  }
  if (verb == "mountdevice") {
    const MountEntry* m = MountAt(Global());
    ASSERT_NE(m, nullptr);
    const std::string want = row.device_formatted ? "xfs" : (*row.fs_type ? row.fs_type : "ext4");
    EXPECT_EQ(m->fs_type, want);
    EXPECT_EQ(Did("format /dev/fake0 " + want), !row.device_formatted);
  }
  DeletePod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  EXPECT_TRUE(fs().Mounts().empty());
  EXPECT_FALSE(fs().PathExists(PodDir("p")));
  EXPECT_FALSE(fs().PathExists(Global()));
  // The driver ran the verb once: after its Not supported, kubelet did the work itself.
  EXPECT_EQ(Runs(row.verb), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, SimulatorKubeletFallback,
    ::testing::Values(FallbackRow{"MountBindsTheGlobalPath", "mount"},
                      FallbackRow{"ReadOnlyMountIsRemountedReadOnly", "mount", true},
                      FallbackRow{"UnmountIsKubeletsUnmount", "unmount"},
                      FallbackRow{"MountDeviceFormatsExt4ByDefault", "mountdevice"},
                      FallbackRow{"MountDeviceFormatsTheFsType", "mountdevice", false, "xfs"},
                      FallbackRow{"MountDeviceKeepsAnExistingFilesystem", "mountdevice", false,
                                  "ext4", true},
                      FallbackRow{"UnmountDeviceIsKubeletsUnmount", "unmountdevice"}),
    [](const auto& row) { return std::string(row.param.name); });

TEST_F(SimulatorKubeletRules, BindFallbackFailsWhenGetVolumeNameFails) {
  replies_["mount"] = [](const ProcessSpec&) { return NotSupported(); };
  int names = 0;
  // The third getvolumename is the bind's getDeviceMountPath (the first two
  // name the volume and its device mount path).
  replies_["getvolumename"] = [&](const ProcessSpec&) {
    return ++names == 3 ? Failure("no name") : Success(R"(,"volumeName":"data")");
  };
  AddPod("p");
  auto errors = kubelet().Sync();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("MountVolume.SetUp of volume data failed: GetVolumeName failed from "
                            "getDeviceMountPath:",
                            0),
            0u)
      << errors[0];
  EXPECT_NE(errors[0].find("no name"), std::string::npos) << errors[0];
  EXPECT_FALSE(fs().PathExists(PodDir("p")));
  EXPECT_TRUE(kubelet().DeviceMounted("data"));
}

TEST_F(SimulatorKubeletRules, BindFallbackOfANonAttachableDriverHasNoGlobalPathToBind) {
  // MountDevice never runs without attach, so the bind's source is missing.
  replies_["mount"] = [](const ProcessSpec&) { return NotSupported(); };
  attach_ = false;
  AddPod("p");
  auto errors = kubelet().Sync();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("No such file or directory"), std::string::npos) << errors[0];
  EXPECT_FALSE(fs().PathExists(PodDir("p")));
}

// --- teardown rules --------------------------------------------------------

struct TeardownRow {
  const char* name;
  // What the driver's unmount does to the pod dir, and its reply.
  std::function<ProcessResult(FakeNodeFilesystem&, const std::string& dir)> unmount;
  bool dir_gone_before = false;  // the pod dir vanished before teardown
  bool want_unmount_call = true;
  bool want_error = false;
  bool want_dir = false;  // the pod dir is still there afterwards
};

class SimulatorKubeletTeardown : public SimulatorKubeletRules,
                                 public ::testing::WithParamInterface<TeardownRow> {};

TEST_P(SimulatorKubeletTeardown, PodDir) {
  const TeardownRow& row = GetParam();
  attach_ = false;
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  replies_["unmount"] = [&](const ProcessSpec& s) { return row.unmount(fs(), s.args.at(1)); };
  if (row.dir_gone_before) {
    fs().Unmount(PodDir("p"));
    fs().RemoveDir(PodDir("p"));
  }
  DeletePod("p");
  auto errors = kubelet().Sync();
  EXPECT_EQ(!errors.empty(), row.want_error) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(Runs("unmount"), row.want_unmount_call ? 1 : 0);
  EXPECT_EQ(fs().PathExists(PodDir("p")), row.want_dir);
  // A failed teardown keeps the pod mounted, to be retried.
  EXPECT_EQ(kubelet().PodsWithVolume("data").empty(), !row.want_error);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, SimulatorKubeletTeardown,
    ::testing::Values(
        TeardownRow{"UnmountThenRmdir",
                    [](FakeNodeFilesystem& f, const std::string& d) {
                      f.Unmount(d);
                      return Success();
                    }},
        TeardownRow{"DriverRemovingTheDirIsFine",
                    [](FakeNodeFilesystem& f, const std::string& d) {
                      f.Unmount(d);
                      f.RemoveDir(d);
                      return Success();
                    }},
        TeardownRow{"MissingDirSkipsUnmount",
                    [](FakeNodeFilesystem&, const std::string&) { return Success(); }, true, false},
        TeardownRow{"FailedUnmountKeepsTheDir",
                    [](FakeNodeFilesystem&, const std::string&) { return Failure("busy"); }, false,
                    true, true, true},
        TeardownRow{"SuccessStillMountedIsAnRmdirError",
                    [](FakeNodeFilesystem&, const std::string&) { return Success(); }, false, true,
                    true, true}),
    [](const auto& row) { return std::string(row.param.name); });

TEST_F(SimulatorKubeletRules, UnmountDeviceIsSkippedWhenTheGlobalPathIsNoMountPoint) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  fs().Unmount(Global());  // someone unmounted it already
  DeletePod("p");
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("unmountdevice"), 0);
  EXPECT_FALSE(fs().PathExists(Global()));
  EXPECT_EQ(Runs("detach"), 1);  // kubelet-managed: detached right away
  EXPECT_TRUE(state_.node_status["node-1"].volumes_attached.empty());
}

TEST_F(SimulatorKubeletRules, TeardownOrderIsUnmountUnmountDeviceDetach) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  const auto before = runner_.specs().size();
  DeletePod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  std::vector<std::string> verbs;
  auto specs = runner_.specs();
  for (auto i = before; i < specs.size(); ++i) verbs.push_back(specs[i].args.at(0));
  // getvolumename (GetDeviceMountPath) is answered from the cache.
  EXPECT_EQ(verbs, (std::vector<std::string>{"unmount", "unmountdevice", "detach"}));
}

TEST_F(SimulatorKubeletRules, ControllerManagedVolumeWaitsForTheControllersAttach) {
  state_.node_status["node-1"].controller_managed_attach = true;
  AddPod("p");
  auto errors = kubelet().Sync();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("not yet attached"), std::string::npos) << errors[0];
  EXPECT_EQ(state_.node_status["node-1"].volumes_in_use.count("k8s/fake/data"), 1u);
  state_.node_status["node-1"].volumes_attached["k8s/fake/data"] = "/dev/fake7";
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("attach"), 0);
  ASSERT_NE(MountAt(Global()), nullptr);
  EXPECT_EQ(MountAt(Global())->source, "/dev/fake7");
}

// --- reconstruction after restart -----------------------------------------

// reconstruct.go: a volume found on disk comes back mounted "uncertain"
// with device path "": MountVolume runs again (waitforattach "",
// getvolumename), and mountdevice and mount are skipped where the mounts
// are still there.
TEST_F(SimulatorKubeletRules, KubeletRestartMountsTheReconstructedVolumeAgainWithNoDevicePath) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  kubelet().Restart();
  EXPECT_EQ(kubelet().PodsWithVolume("data"), std::set<std::string>{"uid-p"});
  EXPECT_FALSE(kubelet().DeviceMounted("data"));  // uncertain until MountVolume
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_TRUE(kubelet().DeviceMounted("data"));
  EXPECT_EQ(Runs("waitforattach"), 2);
  EXPECT_EQ(LastArgs("waitforattach").at(1), "");
  EXPECT_EQ(Runs("attach"), 1);  // a reconstructed volume is attached already
  EXPECT_EQ(Runs("mount"), 1);   // not mounted again
  EXPECT_EQ(Runs("mountdevice"), 1);
}

// With the controller, node status gives a reconstructed volume its device
// after the first pass: a waitforattach that failed on "" is retried with it.
TEST_F(SimulatorKubeletRules, ControllerManagedRestartRetriesWaitForAttachWithNodeStatusDevice) {
  state_.node_status["node-1"].controller_managed_attach = true;
  state_.node_status["node-1"].volumes_attached["k8s/fake/data"] = "/dev/fake0";
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  replies_["waitforattach"] = [](const ProcessSpec& s) {
    if (s.args.at(1).empty()) return Failure("no device given");
    return Success(R"(,"device":")" + s.args.at(1) + "\"");
  };
  kubelet().Restart();
  EXPECT_EQ(kubelet().Sync().size(), 1u);
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(LastArgs("waitforattach").at(1), "/dev/fake0");
}

// With kubelet-managed attach nothing lists the device: the path stays ""
// and kubelet never attaches the reconstructed volume again.
TEST_F(SimulatorKubeletRules, KubeletManagedRestartKeepsAnEmptyDevicePath) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  replies_["waitforattach"] = [](const ProcessSpec& s) {
    if (s.args.at(1).empty()) return Failure("no device given");
    return Success(R"(,"device":")" + s.args.at(1) + "\"");
  };
  kubelet().Restart();
  EXPECT_EQ(kubelet().Sync().size(), 1u);
  EXPECT_EQ(kubelet().Sync().size(), 1u);
  EXPECT_EQ(LastArgs("waitforattach").at(1), "");
  EXPECT_EQ(Runs("attach"), 1);
}

TEST_F(SimulatorKubeletRules, PodDeletedWhileKubeletWasDownIsTornDownAfterReconstruction) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  DeletePod("p");
  kubelet().Restart();
  EXPECT_EQ(kubelet().PodsWithVolume("data"), std::set<std::string>{"uid-p"});
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("unmount"), 1);
  EXPECT_EQ(Runs("unmountdevice"), 1);
  EXPECT_TRUE(fs().Mounts().empty());
  EXPECT_FALSE(fs().PathExists(PodDir("p")));
}

TEST_F(SimulatorKubeletRules, NodeRestartMountsTheBoundPodAgain) {
  AddPod("p");
  ASSERT_TRUE(kubelet().Sync().empty());
  fs().WriteFile(PodDir("p") + "/kept", "on the tmpfs");
  node_->Restart();  // every mount gone, the directories stay
  EXPECT_TRUE(fs().Mounts().empty());
  EXPECT_TRUE(fs().PathExists(PodDir("p")));
  kubelet().Restart();
  EXPECT_FALSE(kubelet().DeviceMounted("data"));  // reconstructed: mounted "uncertain"
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_EQ(Runs("mount"), 2);
  EXPECT_EQ(Runs("mountdevice"), 2);
  EXPECT_TRUE(fs().IsMountPoint(PodDir("p")));
}

TEST_F(SimulatorKubeletRules, ACrashedNodeHasNothingToSync) {
  AddPod("p");
  node_->Crash();
  EXPECT_TRUE(kubelet().Sync().empty());
  EXPECT_TRUE(runner_.specs().empty());
}

}  // namespace
}  // namespace flexkit::sim
