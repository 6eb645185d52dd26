// The real flexsim binary running the scenario files of tests/data/scenarios
// against the test drivers (and the SDK's flexkit-tmpfs), and `flexsim apply`.
// A scenario run and an apply leave no process, mount or loop device behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/simulator/test_paths.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

namespace fs = std::filesystem;
using flexkit::testing::RunProcess;
using sim::testing::Flexsim;

std::string Scenario(const std::string& name) {
  return std::string(FLEXKIT_SOURCE_DIR) + "/tests/data/scenarios/" + name;
}

// Mounts in our namespace, processes whose cmdline and loop devices whose
// backing file mention the run dir.
void ExpectNothingLeft(const std::string& run_dir) {
  EXPECT_EQ(flexkit::testing::ReadFileText("/proc/self/mountinfo").find(run_dir),
            std::string::npos);
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator("/sys/block", ec)) {
    std::string backing =
        flexkit::testing::ReadFileText(dev.path().string() + "/loop/backing_file");
    EXPECT_EQ(backing.find(run_dir), std::string::npos) << dev.path() << " still attached";
  }
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    EXPECT_EQ(flexkit::testing::ReadFileText(entry.path().string() + "/cmdline").find(run_dir),
              std::string::npos)
        << "process " << name << " outlived the run";
  }
}

flexkit::testing::ProcessResult RunFlexsim(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {Flexsim()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

class SimulatorScenario : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
};

TEST_P(SimulatorScenario, PassesAndLeavesNothingBehind) {
  flexkit::testing::TempDir dir("flexsim-scenario");
  const std::string run_dir = dir.Join("run");
  const std::string transcript = dir.Join("transcript.json");
  flexkit::testing::ProcessResult p =
      RunFlexsim({"run", Scenario(GetParam()), "--run-dir", run_dir, "--transcript", transcript});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("PASS"), std::string::npos) << p.err;
  auto j = nlohmann::json::parse(flexkit::testing::ReadFileText(transcript));
  EXPECT_FALSE(j.empty());
  ExpectNothingLeft(run_dir);
}

INSTANTIATE_TEST_SUITE_P(
    SimulatorScenarios, SimulatorScenario,
    ::testing::Values("pod_lifecycle.yaml", "attach_controller.yaml", "attach_kubelet_managed.yaml",
                      "kubelet_restart.yaml", "node_crash_reschedule.yaml",
                      "node_crash_kubelet_managed.yaml", "node_returns_with_pod.yaml",
                      "read_only_and_secrets.yaml", "prefix_reconstruction.yaml",
                      "kubelet_down_cleanup.yaml", "format_and_mount.yaml"),
    [](const ::testing::TestParamInfo<std::string>& scenario) {
      return scenario.param.substr(0, scenario.param.find('.'));
    });

class SimulatorRunCli : public ::testing::Test {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
  flexkit::testing::TempDir dir_{"flexsim-runcli"};
};

TEST_F(SimulatorRunCli, FailingExpectationFailsTheRunWithTheStep) {
  std::string scenario = dir_.Join("s.yaml");
  std::ofstream(scenario)
      << "driver: " << Scenario("../drivers/k8s~dummy/dummy") << "\n"
      << "nodes: [{name: n1}]\n"
      << "steps:\n"
      << "  - apply: |\n"
      << "      kind: Pod\n"
      << "      metadata: {name: p}\n"
      << "      spec: {nodeName: n1, volumes: [{name: v, flexVolume: {driver: k8s/dummy}}]}\n"
      << "  - expectVolume: {volume: v, mountedFor: []}\n";
  flexkit::testing::ProcessResult p = RunFlexsim({"run", scenario, "--quiet"});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("step 2"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("mountedFor [default/p], expected []"), std::string::npos) << p.err;
}

// A misspelt key would be ignored and the scenario pass without testing
// what it says: refused with file and line before anything runs.
TEST_F(SimulatorRunCli, UnknownKeysAreRefusedWithFileAndLineBeforeAnythingRuns) {
  const std::string driver = Scenario("../drivers/k8s~dummy/dummy");
  const std::string pod =
      "  - apply: |\n"
      "      kind: Pod\n"
      "      metadata: {name: p}\n"
      "      spec: {nodeName: n1, volumes: [{name: v, flexVolume: {driver: k8s/dummy}}]}\n";
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"driver: " + driver + "\nnodes: [{name: n1}]\nstep:\n" + pod,
       "s.yaml:3: unknown key \"step\" in the scenario"},
      {"driver: " + driver + "\nnodes: [{name: n1, kubeletManagedAtach: true}]\nsteps:\n" + pod,
       "s.yaml:2: unknown key \"kubeletManagedAtach\" in a node"},
      {"driver: " + driver + "\nnodes: [{name: n1}]\nsteps:\n" + pod +
           "  - expectVolume: {volume: v, mountedOn: []}\n",
       "s.yaml:8: unknown key \"mountedOn\" in expectVolume"},
      {"driver: " + driver + "\nnodes: [{name: n1}]\nsteps:\n" + pod + "  - expectMounted: v\n",
       "s.yaml:8: unknown step \"expectMounted\""}};
  for (const auto& c : cases) {
    std::ofstream(dir_.Join("s.yaml")) << c.text;
    flexkit::testing::ProcessResult p =
        RunFlexsim({"run", dir_.Join("s.yaml"), "--transcript", dir_.Join("t.json")});
    EXPECT_EQ(p.exit_code, 2) << c.text;
    EXPECT_NE(p.err.find(c.error), std::string::npos) << p.err;
    EXPECT_EQ(p.err.find("step 1"), std::string::npos) << "nothing ran: " << p.err;
    EXPECT_FALSE(fs::exists(dir_.Join("t.json")));
  }
}

TEST_F(SimulatorRunCli, BrokenDriverNeverGetsLoaded) {
  std::string scenario = dir_.Join("s.yaml");
  std::ofstream(scenario)
      << "nodes: [{name: n1}]\n"
      << "driverName: k8s/dummy\n"
      << "steps:\n"
      << "  - apply: |\n"
      << "      kind: Pod\n"
      << "      metadata: {name: p}\n"
      << "      spec: {nodeName: n1, volumes: [{name: v, flexVolume: {driver: k8s/dummy}}]}\n"
      << "  - expectVolume: {volume: v, mountedFor: []}\n"
      << "  - expectCalls: {verb: mount, count: 0}\n";
  flexkit::testing::ProcessResult p = RunFlexsim(
      {"run", scenario, "--quiet", "--driver", sim::testing::TestDriver("test~echo-ne")});
  // Every step passes; the run still fails on the reply nobody could use.
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_EQ(p.err.find("FAIL: step"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("FAIL: init by the kubelet on n1: the reply did not decode"),
            std::string::npos)
      << p.err;
}

TEST_F(SimulatorRunCli, ApplyMountsEveryPodVolume) {
  std::string manifest = dir_.Join("m.yaml");
  std::ofstream(manifest)
      << "kind: Pod\nmetadata: {name: a}\n"
      << "spec: {nodeName: n1, volumes: [{name: v, flexVolume: {driver: k8s/dummy}}]}\n"
      << "---\nkind: Pod\nmetadata: {name: b}\n"
      << "spec: {nodeName: n2, volumes: [{name: v, flexVolume: {driver: k8s/dummy}}]}\n";
  const std::string run_dir = dir_.Join("run");
  flexkit::testing::ProcessResult p =
      RunFlexsim({"apply", manifest, "--driver", sim::testing::TestDriver("k8s~dummy"), "--run-dir",
                  run_dir, "--transcript", dir_.Join("t.json")});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  int mounts = 0;
  for (const auto& e : nlohmann::json::parse(flexkit::testing::ReadFileText(dir_.Join("t.json")))) {
    if (e.value("verb", "") == "mount" && e["verdict"]["outcome"] == "success") ++mounts;
  }
  EXPECT_EQ(mounts, 2);
  ExpectNothingLeft(run_dir);
}

TEST_F(SimulatorRunCli, ApplyFailsWhenAVolumeCannotMount) {
  std::string manifest = dir_.Join("m.yaml");
  std::ofstream(manifest)
      << "kind: Pod\nmetadata: {name: a}\n"
      << "spec: {nodeName: n1, volumes: [{name: v, flexVolume: {driver: test/failure-exit1}}]}\n";
  flexkit::testing::ProcessResult p = RunFlexsim(
      {"apply", manifest, "--quiet", "--driver", sim::testing::TestDriver("test~failure-exit1")});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("not mounted: [default/a:v]"), std::string::npos) << p.err;
}

// A copy of test~loop-attach in the test's dir (its images go beside it)
// behind a wrapper at <dir>/test~loop-attach/loop-attach running `before`
// first: what makes the driver misbehave.
std::string WrappedLoopDriver(const flexkit::testing::TempDir& dir, const std::string& before) {
  fs::create_directories(dir.Join("real"));
  fs::copy_file(Scenario("../drivers/test~loop-attach/loop-attach"), dir.Join("real/loop-attach"));
  fs::create_directories(dir.Join("test~loop-attach"));
  const std::string wrapper = dir.Join("test~loop-attach/loop-attach");
  std::ofstream(wrapper) << "#!/bin/sh\n"
                         << before << "exec '" << dir.Join("real/loop-attach") << "' \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  return wrapper;
}

// Every step passes; the controller attaches and detaches.
constexpr char kLoopScenario[] =
    "nodes: [{name: node-a}]\n"
    "steps:\n"
    "  - apply: |\n"
    "      kind: Pod\n"
    "      metadata: {name: db}\n"
    "      spec:\n"
    "        nodeName: node-a\n"
    "        volumes: [{name: disk, flexVolume: {driver: test/loop-attach, fsType: ext4}}]\n"
    "  - expectSettled: true\n"
    "  - expectVolume: {volume: disk, attachedTo: [node-a], mountedFor: [default/db]}\n"
    "  - deletePod: db\n"
    "  - expectSettled: true\n";

// A detach that answers Success and leaves the loop device bound: every
// step passes, and the run fails naming the device.
TEST_F(SimulatorRunCli, ALoopDeviceLeftBoundFailsTheRun) {
  const std::string driver = WrappedLoopDriver(
      dir_, "[ \"$1\" = detach ] && { printf '{\"status\":\"Success\"}\\n'; exit 0; }\n");
  std::ofstream(dir_.Join("s.yaml")) << kLoopScenario;
  flexkit::testing::ProcessResult p = RunFlexsim({"run", dir_.Join("s.yaml"), "--driver", driver});
  for (const auto& dev : fs::directory_iterator("/sys/block")) {  // the test's own cleanup
    if (flexkit::testing::ReadFileText(dev.path().string() + "/loop/backing_file")
            .find(dir_.path()) != std::string::npos)
      flexkit::testing::RunProcess({"losetup", "-d", "/dev/" + dev.path().filename().string()});
  }
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_EQ(p.err.find("PASS"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("FAIL: loop device left bound: /dev/loop"), std::string::npos) << p.err;
}

// The controller's first attach prints a debug line before its reply: the
// retry succeeds and every step passes, yet kubelet could not use a reply.
TEST_F(SimulatorRunCli, AnUndecodableReplyFailsTheRunThoughARetryHidIt) {
  const std::string driver = WrappedLoopDriver(
      dir_, "if [ \"$1\" = attach ] && [ ! -e '" + dir_.Join("chatted") + "' ]; then : >'" +
                dir_.Join("chatted") + "'; echo 'debug: attaching'; fi\n");
  std::ofstream(dir_.Join("s.yaml")) << kLoopScenario;
  flexkit::testing::ProcessResult p = RunFlexsim({"run", dir_.Join("s.yaml"), "--driver", driver});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(p.err.find("FAIL: attach by the controller on control-plane: the reply did not decode"),
            std::string::npos)
      << p.err;
  EXPECT_EQ(p.err.find("loop device left"), std::string::npos) << p.err;
}

// The SDK's sample driver (built with these tests: a dependency).
TEST_F(SimulatorRunCli, FlexkitTmpfsPodLifecycle) {
  const std::string tmpfs = flexkit::testing::BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs");
  std::string scenario = flexkit::testing::ReadFileText(Scenario("pod_lifecycle.yaml"));
  // The same scenario with the SDK driver's name and without dummy's index.html.
  std::string out;
  std::istringstream lines(scenario);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("index.html") != std::string::npos) continue;
    auto at = line.find("k8s/dummy");
    if (at != std::string::npos) line.replace(at, 9, "flexkit/tmpfs");
    out += line + "\n";
  }
  std::ofstream(dir_.Join("tmpfs.yaml")) << out;
  flexkit::testing::ProcessResult p =
      RunFlexsim({"run", dir_.Join("tmpfs.yaml"), "--quiet", "--driver", tmpfs, "--driver-name",
                  "flexkit/tmpfs"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
}

}  // namespace
}  // namespace flexkit::sim
