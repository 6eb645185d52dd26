// The attach/detach controller against scripted driver replies
// (FakeProcessRunner), on in-memory nodes and a virtual clock, in process:
// attach and detach, uncertain attachments and their back-off, isattached
// answers, the Multi-Attach guard and force-detach timing.
#include "simulator/controller.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

class SimulatorController : public ::testing::Test {
 protected:
  void SetUp() override {
    runner_ = std::make_unique<FakeProcessRunner>([this](const ProcessSpec& spec) {
      const std::string& verb = spec.args.at(0);
      ++calls_[verb];
      if (auto it = replies_.find(verb); it != replies_.end()) return it->second(spec);
      if (verb == "init") return FakeProcessRunner::Reply(R"({"status":"Success"})");
      if (verb == "attach")
        return FakeProcessRunner::Reply(R"({"status":"Success","device":"/dev/d"})");
      if (verb == "isattached")
        return FakeProcessRunner::Reply(R"({"status":"Success","attached":true})");
      if (verb == "detach") return FakeProcessRunner::Reply(R"({"status":"Success"})");
      return FakeProcessRunner::Reply(R"({"status":"Not supported"})");
    });
    invoker_ = std::make_unique<DriverInvoker>(*runner_, transcript_);
    control_plane_ = FakeNodeFilesystem::MakeNode("control-plane", run_.path());
    std::filesystem::create_directories(control_plane_->plugin_dir() + "/k8s~fake");
    std::ofstream(control_plane_->plugin_dir() + "/k8s~fake/fake") << "";
    for (const char* n : {"node-a", "node-b"}) {
      nodes_[n] = FakeNodeFilesystem::MakeNode(n, run_.path());
      node_ptrs_[n] = nodes_[n].get();
      state_.node_status[n];
    }
  }

  AttachDetachController& Controller(const std::string& profile = "current",
                                     ControllerSettings settings = {}) {
    controller_ = std::make_unique<AttachDetachController>(*control_plane_, state_, *invoker_,
                                                           FindProfile(profile), transcript_,
                                                           clock_, node_ptrs_, settings);
    return *controller_;
  }

  void AddPod(const std::string& name, const std::string& node, const std::string& volume,
              bool inline_volume = false) {
    Pod pod;
    pod.name = name;
    pod.uid = "uid-" + name;
    pod.node = node;
    PodVolume v;
    v.name = "data";
    if (inline_volume) {
      v.name = volume;
      v.flex = FlexSource{"k8s/fake", "", false, {}, "", ""};
    } else {
      state_.pvs[volume] = {
          volume, FlexSource{"k8s/fake", "", false, {}, "", ""}, {"ReadWriteOnce"}};
      state_.pvcs[ClusterState::Key("default", "claim-" + volume)] = {"claim-" + volume, "default",
                                                                      volume};
      v.claim_name = "claim-" + volume;
    }
    pod.volumes.push_back(v);
    state_.pods[ClusterState::Key("default", name)] = pod;
  }

  flexkit::testing::TempDir run_{"flexsim-controller"};
  std::map<std::string, int> calls_;
  std::map<std::string, FakeProcessRunner::Responder> replies_;
  std::unique_ptr<FakeProcessRunner> runner_;
  Transcript transcript_;
  std::unique_ptr<DriverInvoker> invoker_;
  VirtualClock clock_;
  ClusterState state_;
  std::unique_ptr<Node> control_plane_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;
  std::map<std::string, Node*> node_ptrs_;
  std::unique_ptr<AttachDetachController> controller_;
};

TEST_F(SimulatorController, AttachRecordsTheDeviceInNodeStatus) {
  AddPod("p", "node-a", "pv-1");
  Controller().Reconcile();
  EXPECT_EQ(state_.node_status["node-a"].volumes_attached.at("k8s/fake/pv-1"), "/dev/d");
  EXPECT_EQ(
      runner_->specs().back().args,
      (Args{
          "isattached",
          R"({"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw"})",
          "node-a"}));
}

TEST_F(SimulatorController, FailedAttachIsUncertainAndDetachedWhenNoLongerWanted) {
  replies_["attach"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Failure","message":"cloud said no"})", 1);
  };
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  EXPECT_EQ(c.Reconcile().size(), 1u);
  EXPECT_TRUE(state_.node_status["node-a"].volumes_attached.empty());
  state_.pods.clear();
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 1);
}

TEST_F(SimulatorController, AFailedAttachIsRetriedOnlyAfterAnExponentialBackOff) {
  replies_["attach"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Failure","message":"cloud said no"})", 1);
  };
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 1);
  // Held back for 500 ms: not called, still reported as failing.
  auto errors = c.Reconcile();
  EXPECT_EQ(calls_["attach"], 1);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cloud said no (no retries permitted for 500 ms)"), std::string::npos)
      << errors[0];
  EXPECT_EQ(c.NextRetry(), clock_.Now() + std::chrono::milliseconds(500));
  clock_.Advance(std::chrono::milliseconds(499));
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 1);
  clock_.Advance(std::chrono::milliseconds(1));
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 2);
  // Doubled after the second failure; a success forgets it.
  clock_.Advance(std::chrono::milliseconds(999));
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 2);
  replies_.erase("attach");
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_TRUE(c.Reconcile().empty());
  EXPECT_EQ(calls_["attach"], 3);
  EXPECT_EQ(c.NextRetry(), std::nullopt);
}

TEST_F(SimulatorController, TheBackOffOfAFailedAttachDoesNotHoldTheDetachThatFollows) {
  replies_["attach"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Failure","message":"cloud said no"})", 1);
  };
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  state_.pods.clear();
  c.Reconcile();  // another operation on the same volume and node starts afresh
  EXPECT_EQ(calls_["detach"], 1);
}

TEST_F(SimulatorController, TheBackOffIsCappedAndForgottenOnARestart) {
  replies_["detach"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Failure","message":"daemon gone"})", 1);
  };
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  state_.pods.clear();
  for (int i = 0; i < 12; ++i) {  // 500 ms doubled 8 times is past the cap
    c.Reconcile();                // fails
    c.Reconcile();                // held back
    ASSERT_TRUE(c.NextRetry());
    clock_.Advance(*c.NextRetry() - clock_.Now());
  }
  c.Reconcile();
  c.Reconcile();
  ASSERT_TRUE(c.NextRetry());
  EXPECT_EQ(*c.NextRetry() - clock_.Now(), std::chrono::seconds(122));
  const int detaches = calls_["detach"];
  c.Restart();
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], detaches + 1);
}

TEST_F(SimulatorController, IsAttachedFalseMarksDetachedAndAttachesAgain) {
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  replies_["isattached"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Success","attached":false})");
  };
  clock_.Advance(std::chrono::minutes(1));
  c.Reconcile();
  EXPECT_TRUE(state_.node_status["node-a"].volumes_attached.empty());
  replies_.erase("isattached");
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 2);
}

TEST_F(SimulatorController, IsAttachedOnlyEverySyncPeriod) {
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  c.Reconcile();
  clock_.Advance(std::chrono::seconds(59));
  c.Reconcile();
  EXPECT_EQ(calls_["isattached"], 1);
  clock_.Advance(std::chrono::seconds(1));
  c.Reconcile();
  EXPECT_EQ(calls_["isattached"], 2);
}

TEST_F(SimulatorController, IsAttachedFailureAbandonsTheNodesBatch) {
  AddPod("p1", "node-a", "pv-1");
  AddPod("p2", "node-a", "pv-2");
  auto& c = Controller();
  c.Reconcile();
  replies_["isattached"] = [](const ProcessSpec&) {
    return FakeProcessRunner::Reply(R"({"status":"Failure","message":"api down"})", 1);
  };
  calls_.clear();
  clock_.Advance(std::chrono::minutes(1));
  c.Reconcile();
  EXPECT_EQ(calls_["isattached"], 1);
  EXPECT_EQ(state_.node_status["node-a"].volumes_attached.size(), 2u);
}

TEST_F(SimulatorController, WaitsForVolumesInUseToClearOnAHealthyNode) {
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  state_.node_status["node-a"].volumes_in_use.insert("k8s/fake/pv-1");
  state_.pods.clear();
  clock_.Advance(std::chrono::minutes(30));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 0);  // healthy: never forced
  state_.node_status["node-a"].volumes_in_use.clear();
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 1);
}

TEST_F(SimulatorController, ForceDetachesAnUnhealthyNodeAfterSixMinutes) {
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  state_.node_status["node-a"].volumes_in_use.insert("k8s/fake/pv-1");
  nodes_["node-a"]->SetPartitioned(true);
  state_.pods.clear();
  c.Reconcile();
  clock_.Advance(std::chrono::minutes(6) - std::chrono::milliseconds(1));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 0);
  clock_.Advance(std::chrono::milliseconds(1));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 1);
}

TEST_F(SimulatorController, DisabledForceDetachNeverDetachesAnInUseVolume) {
  AddPod("p", "node-a", "pv-1");
  ControllerSettings settings;
  settings.disable_force_detach_on_timeout = true;
  auto& c = Controller("current", settings);
  c.Reconcile();
  state_.node_status["node-a"].volumes_in_use.insert("k8s/fake/pv-1");
  nodes_["node-a"]->Crash();
  state_.pods.clear();
  c.Reconcile();
  clock_.Advance(std::chrono::hours(1));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 0);
}

TEST_F(SimulatorController, ReadWriteOnceVolumeIsNotAttachedToASecondNode) {
  AddPod("p1", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  AddPod("p2", "node-b", "pv-1");
  c.Reconcile();
  EXPECT_EQ(calls_["attach"], 1);
  EXPECT_EQ(state_.node_status["node-a"].volumes_attached.count("k8s/fake/pv-1"), 1u);
  EXPECT_TRUE(state_.node_status["node-b"].volumes_attached.empty());
  int refusals = 0;
  for (const auto& e : transcript_.ToJson())
    refusals += e.value("event", "") == "Multi-Attach error";
  EXPECT_EQ(refusals, 1);
  // Once the first node lets go, the second gets it.
  state_.pods.erase(ClusterState::Key("default", "p1"));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 1);
  EXPECT_EQ(calls_["attach"], 2);
  EXPECT_EQ(state_.node_status["node-b"].volumes_attached.count("k8s/fake/pv-1"), 1u);
}

TEST_F(SimulatorController, ForceDetachWaitsFromWhenTheVolumeWasLastWanted) {
  AddPod("p", "node-a", "pv-1");
  auto& c = Controller();
  c.Reconcile();
  state_.node_status["node-a"].volumes_in_use.insert("k8s/fake/pv-1");
  nodes_["node-a"]->Crash();
  clock_.Advance(std::chrono::minutes(10));  // wanted all this time: no timer yet
  c.Reconcile();
  state_.pods.clear();
  c.Reconcile();
  clock_.Advance(std::chrono::minutes(5));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 0);
  clock_.Advance(std::chrono::minutes(1));
  c.Reconcile();
  EXPECT_EQ(calls_["detach"], 1);
  // The detach also took the volume out of the node's status.
  EXPECT_TRUE(state_.node_status["node-a"].volumes_attached.empty());
}

TEST_F(SimulatorController, InlineVolumesAreExemptFromTheMultiAttachGuard) {
  AddPod("p1", "node-a", "shared", /*inline_volume=*/true);
  AddPod("p2", "node-b", "shared", /*inline_volume=*/true);
  Controller().Reconcile();
  EXPECT_EQ(calls_["attach"], 2);
}

TEST_F(SimulatorController, KubeletManagedNodesAreLeftAlone) {
  state_.node_status["node-a"].controller_managed_attach = false;
  AddPod("p", "node-a", "pv-1");
  Controller().Reconcile();
  EXPECT_EQ(calls_["attach"], 0);
}

}  // namespace
}  // namespace flexkit::sim
