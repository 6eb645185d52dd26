// The prober against a real plugin dir, inotify and real drivers
// (reference §1.3), run on a real node namespace.
#include "simulator/prober.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "simulator/boost_process_runner.h"
#include "simulator/plugin_name.h"
#include "tests/simulator/test_paths.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

namespace fs = std::filesystem;
using sim::testing::TestDriver;

class SimulatorProber : public ::testing::Test {
 protected:
  void SetUp() override {
    FLEXKIT_REQUIRE_ROOT();
    node_ = std::make_unique<Node>("node-1", run_.path());
    invoker_ = std::make_unique<DriverInvoker>(runner_, transcript_);
    prober_ = std::make_unique<Prober>(*node_, node_->plugin_dir(), "kubelet", *invoker_,
                                       FindProfile("current"));
  }
  // Installs test driver `source` (a tests/data/drivers folder) as `dir_name`.
  void Install(const std::string& source, const std::string& dir_name) {
    fs::path dir = fs::path(node_->plugin_dir()) / dir_name;
    fs::create_directories(dir);
    fs::copy_file(TestDriver(source), dir / ExecutableName(UnescapeDriverName(dir_name)),
                  fs::copy_options::overwrite_existing);
  }
  int Executions(const std::string& verb) {
    int n = 0;
    for (const auto& c : transcript_.Calls()) n += c.verb == verb && !c.answered_from_cache;
    return n;
  }
  flexkit::testing::TempDir run_{"flexsim-prober"};
  BoostProcessRunner runner_;
  Transcript transcript_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<DriverInvoker> invoker_;
  std::unique_ptr<Prober> prober_;
};

TEST_F(SimulatorProber, FirstProbeInitsEveryDriverFolderButDotFolders) {
  Install("k8s~dummy", "k8s~dummy");
  Install("k8s~dummy", ".k8s~hidden");
  EXPECT_TRUE(prober_->Probe().empty());
  EXPECT_EQ(prober_->PluginNames(), std::vector<std::string>{"k8s/dummy"});
  auto plugin = prober_->Find("k8s/dummy");
  ASSERT_NE(plugin, nullptr);
  EXPECT_FALSE(plugin->capabilities.attach);
  EXPECT_EQ(Executions("init"), 1);
}

TEST_F(SimulatorProber, InvalidNamesAreRefused) {
  Install("k8s~dummy", "a~b~c");
  Install("k8s~dummy", "Upper.Case~x");
  auto errors = prober_->Probe();
  EXPECT_EQ(errors.size(), 2u);
  EXPECT_TRUE(prober_->PluginNames().empty());
}

TEST_F(SimulatorProber, ExecutableMustBeNamedAfterLastSegment) {
  fs::create_directories(node_->plugin_dir() + "/k8s~dummy");
  fs::copy_file(TestDriver("k8s~dummy"), node_->plugin_dir() + "/k8s~dummy/wrong-name");
  auto errors = prober_->Probe();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("unexpected end of JSON input"), std::string::npos) << errors[0];
}

TEST_F(SimulatorProber, NotSupportedIsCachedUntilReprobe) {
  Install("k8s~dummy", "k8s~dummy");
  auto plugin = prober_->Find("k8s/dummy");
  ASSERT_NE(plugin, nullptr);
  Args args = ArgvBuilder(FindProfile("current")).GetVolumeName("{}");
  EXPECT_TRUE(prober_->Call(*plugin, args, Redactor()).not_supported());
  EXPECT_TRUE(prober_->Call(*plugin, args, Redactor()).not_supported());
  EXPECT_EQ(Executions("getvolumename"), 1);
  // Any change in the driver's folder rebuilds the plugin: init again, cache gone.
  std::ofstream(node_->plugin_dir() + "/k8s~dummy/README") << "x";
  auto rebuilt = prober_->Find("k8s/dummy");
  ASSERT_NE(rebuilt, nullptr);
  EXPECT_EQ(Executions("init"), 2);
  EXPECT_TRUE(prober_->Call(*rebuilt, args, Redactor()).not_supported());
  EXPECT_EQ(Executions("getvolumename"), 2);
}

TEST_F(SimulatorProber, FailedInitAtStartupIsNotRetriedUntilItsFolderChanges) {
  Install("test~echo-ne", "k8s~broken");
  EXPECT_EQ(prober_->Probe().size(), 1u);
  EXPECT_TRUE(prober_->Probe().empty());
  EXPECT_EQ(Executions("init"), 1);
  Install("k8s~dummy", "k8s~broken");  // a working driver in its place: an event
  EXPECT_TRUE(prober_->Probe().empty());
  EXPECT_NE(prober_->Find("k8s/broken"), nullptr);
}

TEST_F(SimulatorProber, FailedInitAfterAnEventIsRetriedOnEveryProbe) {
  prober_->Probe();
  Install("test~quoted-bools", "k8s~late");
  EXPECT_EQ(prober_->Probe().size(), 1u);
  EXPECT_EQ(prober_->Probe().size(), 1u);
  EXPECT_EQ(Executions("init"), 2);
  EXPECT_EQ(prober_->Find("k8s/late"), nullptr);
}

TEST_F(SimulatorProber, RemovingTheExecutableRemovesThePlugin) {
  Install("k8s~dummy", "k8s~dummy");
  ASSERT_NE(prober_->Find("k8s/dummy"), nullptr);
  fs::remove(node_->plugin_dir() + "/k8s~dummy/dummy");
  EXPECT_EQ(prober_->Find("k8s/dummy"), nullptr);
}

TEST_F(SimulatorProber, AtomicInstallThroughADotFileIsPickedUp) {
  prober_->Probe();
  fs::create_directories(node_->plugin_dir() + "/k8s~dummy");
  fs::copy_file(TestDriver("k8s~dummy"), node_->plugin_dir() + "/k8s~dummy/.dummy.tmp");
  fs::rename(node_->plugin_dir() + "/k8s~dummy/.dummy.tmp",
             node_->plugin_dir() + "/k8s~dummy/dummy");
  EXPECT_NE(prober_->Find("k8s/dummy"), nullptr);
}

TEST_F(SimulatorProber, OnlyTheChangedDriverIsReinitialised) {
  Install("k8s~dummy", "k8s~dummy");
  Install("k8s~dummy-attachable", "k8s~dummy-attachable");
  prober_->Probe();
  EXPECT_EQ(Executions("init"), 2);
  std::ofstream(node_->plugin_dir() + "/k8s~dummy/notes") << "x";
  prober_->Probe();
  EXPECT_EQ(Executions("init"), 3);
}

}  // namespace
}  // namespace flexkit::sim
