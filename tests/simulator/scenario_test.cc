// Scenario files run in process: in-memory nodes and a scripted driver
// (ScenarioOptions::make_node and ::runner), so the step language is tested
// without root.
#include "simulator/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

class SimulatorScenarioInProcess : public ::testing::Test {
 protected:
  SimulatorScenarioInProcess() {
    std::filesystem::create_directories(run_.Join("k8s~fake"));
    std::ofstream(run_.Join("k8s~fake/fake")) << "";
    std::filesystem::create_directories(run_.Join("nodes"));
    options_.run_dir = run_.Join("nodes");
    options_.runner = &runner_;
    options_.make_node = [this](const std::string& name, const std::string& run_dir,
                                std::map<std::string, std::string> env) {
      env["NODE"] = name;
      auto node = FakeNodeFilesystem::MakeNode(name, run_dir, std::move(env));
      filesystems_[name] = &FakeNodeFilesystem::Of(*node);
      return node;
    };
  }
  // A driver without attach whose mount mounts a tmpfs on the fake node.
  ProcessResult Driver(const ProcessSpec& spec) {
    const std::string& verb = spec.args.at(0);
    FakeNodeFilesystem& fs = *filesystems_.at(spec.env_overrides.at("NODE"));
    if (verb == "init")
      return FakeProcessRunner::Reply(R"({"status":"Success","capabilities":{"attach":false}})");
    if (verb == "mount") fs.Mount("tmpfs", spec.args.at(1), "tmpfs", 0, "");
    if (verb == "unmount") fs.Unmount(spec.args.at(1));
    if (verb == "mount" || verb == "unmount")
      return FakeProcessRunner::Reply(R"({"status":"Success"})");
    return FakeProcessRunner::Reply(R"({"status":"Not supported"})");
  }
  ScenarioResult Run(const std::string& steps) {
    std::ofstream(run_.Join("scenario.yaml")) << "driver: k8s~fake/fake\n"
                                                 "nodes: [{name: node-a}]\n"
                                                 "steps:\n"
                                              << steps;
    return RunScenario(run_.Join("scenario.yaml"), options_);
  }

  flexkit::testing::TempDir run_{"flexsim-scenario"};
  std::map<std::string, FakeNodeFilesystem*> filesystems_;
  FakeProcessRunner runner_{[this](const ProcessSpec& spec) { return Driver(spec); }};
  ScenarioOptions options_;
};

constexpr const char* kPod = R"(  - apply: |
      kind: Pod
      metadata: {name: web}
      spec:
        nodeName: node-a
        volumes: [{name: data, flexVolume: {driver: k8s/fake}}]
)";

TEST_F(SimulatorScenarioInProcess, PodLifecyclePasses) {
  ScenarioResult r =
      Run(std::string(kPod) + R"(  - expectVolume: {volume: data, mountedFor: [default/web]}
  - writeFile: {pod: web, volume: data, file: hello.txt, content: "hi"}
  - expectFile: {pod: web, volume: data, file: hello.txt, content: "hi"}
  - deletePod: web
  - expectSettled: true
  - expectCalls: {verb: unmount, node: node-a, count: 1}
)");
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_EQ(r.steps_run, 7);
}

TEST_F(SimulatorScenarioInProcess, AFailedCheckStopsTheRunAndNamesItsStep) {
  ScenarioResult r = Run(std::string(kPod) +
                         R"(  - writeFile: {pod: web, volume: data, file: hello.txt, content: "hi"}
  - crashNode: node-a
  - restartNode: node-a
  - expectFile: {pod: web, volume: data, file: hello.txt, content: "hi"}
  - deletePod: web
)");
  // The pod's tmpfs went with the crash: the remounted volume is empty.
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.steps_run, 5);
  EXPECT_EQ(r.failure.rfind("step 5 (", 0), 0u) << r.failure;
}

}  // namespace
}  // namespace flexkit::sim
