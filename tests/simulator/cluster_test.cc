// A cluster of in-memory nodes with a scripted driver, in process: the
// controller and the kubelets settle together on the virtual clock, a node
// restart keeps the device's data, a crashed node's volume is force-detached
// after maxWaitForUnmountDuration and attached to the next node, a failing
// detach is retried as the controller's back-off allows.
#include "simulator/cluster.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

class SimulatorCluster : public ::testing::Test {
 protected:
  SimulatorCluster() {
    std::filesystem::create_directories(run_.Join("drivers/k8s~fake"));
    std::ofstream(run_.Join("drivers/k8s~fake/fake")) << "";
    ClusterConfig config;
    config.run_dir = run_.path();
    config.make_node = [](const std::string& name, const std::string& run_dir,
                          std::map<std::string, std::string> env) {
      env["NODE"] = name;
      return FakeNodeFilesystem::MakeNode(name, run_dir, std::move(env));
    };
    cluster_ = std::make_unique<Cluster>(config, runner_);
    cluster_->InstallDriver(run_.Join("drivers/k8s~fake/fake"));
    Manifest m;
    for (const char* n : {"node-a", "node-b"}) m.nodes.push_back({n, true});
    m.pvs.push_back({"pv-1", FlexSource{"k8s/fake", "", false, {}, "", ""}, {"ReadWriteOnce"}});
    m.pvcs.push_back({"claim", "default", "pv-1"});
    cluster_->Apply(m);
  }

  // The driver: attach and detach succeed, mountdevice mounts the device,
  // mount is left to kubelet's bind fallback.
  ProcessResult Driver(const ProcessSpec& spec) {
    const std::string& verb = spec.args.at(0);
    ++calls_[verb];
    auto ok = [](const std::string& extra = "") {
      return FakeProcessRunner::Reply(R"({"status":"Success")" + extra + "}");
    };
    if (verb == "detach" && detach_failures_ > 0) {
      --detach_failures_;
      return FakeProcessRunner::Reply(R"({"status":"Failure","message":"daemon away"})", 1);
    }
    if (verb == "init" || verb == "detach") return ok();
    if (verb == "attach") return ok(R"(,"device":"/dev/fake0")");
    if (verb == "isattached") return ok(R"(,"attached":true)");
    // Given "" (after a kubelet restart), it looks the device up.
    if (verb == "waitforattach")
      return ok(R"(,"device":")" + (spec.args.at(1).empty() ? "/dev/fake0" : spec.args.at(1)) +
                "\"");
    if (verb == "mountdevice") {
      Fs(spec.env_overrides.at("NODE")).Mount(spec.args.at(2), spec.args.at(1), "ext4", 0, "");
      return ok();
    }
    if (verb == "unmountdevice") {
      Fs(spec.env_overrides.at("NODE")).Unmount(spec.args.at(1));
      return ok();
    }
    return FakeProcessRunner::Reply(R"({"status":"Not supported"})");
  }
  FakeNodeFilesystem& Fs(const std::string& node) {
    return FakeNodeFilesystem::Of(cluster_->node(node));
  }
  void AddPod(const std::string& name, const std::string& node) {
    Manifest m;
    Pod pod;
    pod.name = name;
    pod.uid = "uid-" + name;
    pod.node = node;
    PodVolume v;
    v.name = "data";
    v.claim_name = "claim";
    pod.volumes.push_back(v);
    m.pods.push_back(pod);
    cluster_->Apply(m);
  }
  std::string PodDir(const std::string& name) {
    const Pod& pod = cluster_->pod("default", name);
    return cluster_->kubelet(pod.node).PodVolumeDir(pod, pod.volumes.at(0));
  }

  flexkit::testing::TempDir run_{"flexsim-cluster"};
  std::map<std::string, int> calls_;
  int detach_failures_ = 0;
  FakeProcessRunner runner_{[this](const ProcessSpec& spec) { return Driver(spec); }};
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(SimulatorCluster, PodIsAttachedByTheControllerAndMountedByItsKubelet) {
  AddPod("p", "node-a");
  EXPECT_TRUE(cluster_->Settle().empty());
  EXPECT_EQ(calls_["attach"], 1);
  EXPECT_EQ(calls_["mountdevice"], 1);
  EXPECT_TRUE(Fs("node-a").IsMountPoint(PodDir("p")));
  cluster_->DeletePod("default", "p");
  EXPECT_TRUE(cluster_->Settle().empty());
  EXPECT_EQ(calls_["detach"], 1);
  EXPECT_TRUE(Fs("node-a").Mounts().empty());
}

TEST_F(SimulatorCluster, NodeRestartKeepsTheDevicesData) {
  AddPod("p", "node-a");
  ASSERT_TRUE(cluster_->Settle().empty());
  Fs("node-a").WriteFile(PodDir("p") + "/data.txt", "kept");
  cluster_->RestartNode("node-a");
  EXPECT_FALSE(Fs("node-a").IsMountPoint(PodDir("p")));
  EXPECT_TRUE(cluster_->Settle().empty());
  EXPECT_EQ(calls_["mountdevice"], 2);
  EXPECT_EQ(Fs("node-a").ReadFile(PodDir("p") + "/data.txt"), "kept");
}

TEST_F(SimulatorCluster, CrashedNodesVolumeMovesAfterTheForceDetachTimeout) {
  AddPod("p", "node-a");
  ASSERT_TRUE(cluster_->Settle().empty());
  cluster_->CrashNode("node-a");
  cluster_->DeletePod("default", "p");
  AddPod("q", "node-b");
  cluster_->Settle();
  EXPECT_EQ(calls_["detach"], 0);  // still in use on node-a: Multi-Attach for q
  cluster_->Advance(std::chrono::minutes(6));
  EXPECT_EQ(calls_["detach"], 1);
  EXPECT_EQ(calls_["attach"], 2);
  EXPECT_TRUE(Fs("node-b").IsMountPoint(PodDir("q")));
}

TEST_F(SimulatorCluster, AFailingDetachIsRetriedAfterTheControllersBackOffWithinOneSettle) {
  AddPod("p", "node-a");
  ASSERT_TRUE(cluster_->Settle().empty());
  detach_failures_ = 2;
  cluster_->DeletePod("default", "p");
  EXPECT_TRUE(cluster_->Settle().empty());
  EXPECT_EQ(calls_["detach"], 3);  // once per back-off, not once per round
  // Nothing else moved meanwhile, so the clock passed to each retry: 500 ms, then 1 s.
  std::vector<long> waits;
  for (const auto& entry : cluster_->transcript().ToJson()) {
    if (entry.value("event", "") == "time advanced") waits.push_back(entry["details"]["ms"]);
  }
  EXPECT_EQ(waits, (std::vector<long>{500, 1000}));
}

TEST_F(SimulatorCluster, ADetachThatKeepsFailingIsTriedOnlyAsOftenAsTheBackOffAllows) {
  AddPod("p", "node-a");
  ASSERT_TRUE(cluster_->Settle().empty());
  detach_failures_ = 1000;
  cluster_->DeletePod("default", "p");
  const auto errors = cluster_->Settle(8);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.back().find("daemon away"), std::string::npos) << errors.back();
  EXPECT_EQ(calls_["detach"], 4);  // rounds 1, 3, 5, 7: each failure is followed by a held round
}

}  // namespace
}  // namespace flexkit::sim
