// What makes the prober re-probe (reference §1.3), as a table: each change
// in a driver's folder re-runs `init` for that driver only and drops its
// Not-supported cache; dot-files and untouched folders do not. A real
// plugin dir and inotify (no root needed), an in-memory node, a scripted
// driver.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "simulator/fake_node_filesystem.h"
#include "simulator/fake_process_runner.h"
#include "simulator/prober.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

namespace fs = std::filesystem;

struct TriggerRow {
  const char* name;
  std::function<void(const fs::path& driver_dir)> change;  // in k8s~a
  bool reinit = true;
  bool still_loaded = true;
};

class SimulatorProberTriggers : public ::testing::TestWithParam<TriggerRow> {
 protected:
  void SetUp() override {
    node_ = FakeNodeFilesystem::MakeNode("node-1", run_.path());
    for (const char* d : {"k8s~a", "k8s~b"}) {
      fs::create_directories(fs::path(node_->plugin_dir()) / d);
      std::ofstream(fs::path(node_->plugin_dir()) / d / std::string(d).substr(4)) << "v1";
    }
    prober_ = std::make_unique<Prober>(*node_, node_->plugin_dir(), "kubelet", invoker_,
                                       FindProfile("current"));
  }
  int Inits(const std::string& driver) const {
    int n = 0;
    for (const auto& s : runner_.specs())
      n += s.args.at(0) == "init" && fs::path(s.executable).filename() == driver;
    return n;
  }
  int MountRuns() const {
    int n = 0;
    for (const auto& s : runner_.specs()) n += s.args.at(0) == "mount";
    return n;
  }

  flexkit::testing::TempDir run_{"flexsim-prober-triggers"};
  FakeProcessRunner runner_{[](const ProcessSpec& spec) {
    if (spec.args.at(0) == "init") return FakeProcessRunner::Reply(R"({"status":"Success"})");
    return FakeProcessRunner::Reply(R"({"status":"Not supported"})");
  }};
  Transcript transcript_;
  DriverInvoker invoker_{runner_, transcript_};
  std::unique_ptr<Node> node_;
  std::unique_ptr<Prober> prober_;
};

TEST_P(SimulatorProberTriggers, ChangeInTheDriversFolder) {
  const TriggerRow& row = GetParam();
  auto a = prober_->Find("k8s/a");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(prober_->Find("k8s/b"), nullptr);
  prober_->Call(*a, {"mount", "/x", "{}"}, Redactor());
  prober_->Call(*a, {"mount", "/x", "{}"}, Redactor());
  ASSERT_EQ(MountRuns(), 1);  // cached Not supported
  row.change(fs::path(node_->plugin_dir()) / "k8s~a");
  auto again = prober_->Find("k8s/a");
  EXPECT_EQ(Inits("a"), row.reinit ? 2 : 1);
  EXPECT_EQ(Inits("b"), 1);  // only the changed driver
  ASSERT_EQ(again != nullptr, row.still_loaded);
  if (!again) return;
  prober_->Call(*again, {"mount", "/x", "{}"}, Redactor());
  EXPECT_EQ(MountRuns(), row.reinit ? 2 : 1);  // a new plugin object asks again
}

INSTANTIATE_TEST_SUITE_P(
    Rules, SimulatorProberTriggers,
    ::testing::Values(
        TriggerRow{"NothingChanged", [](const fs::path&) {}, false},
        TriggerRow{"ExecutableRewritten",
                   [](const fs::path& d) { std::ofstream(d / "a", std::ios::app) << "v2"; }},
        TriggerRow{"ExecutableChmod", [](const fs::path& d) { ::chmod((d / "a").c_str(), 0700); }},
        TriggerRow{"HelperAdded", [](const fs::path& d) { std::ofstream(d / "common.sh") << ""; }},
        TriggerRow{"AtomicReplaceThroughADotFile",
                   [](const fs::path& d) {
                     std::ofstream(d / ".a.tmp") << "v2";
                     fs::rename(d / ".a.tmp", d / "a");
                   }},
        TriggerRow{"DotFileAloneIsIgnored",
                   [](const fs::path& d) { std::ofstream(d / ".a.tmp") << "v2"; }, false},
        TriggerRow{"ExecutableRemoved", [](const fs::path& d) { fs::remove(d / "a"); }, false,
                   false},
        TriggerRow{"FolderRemoved", [](const fs::path& d) { fs::remove_all(d); }, false, false}),
    [](const auto& row) { return std::string(row.param.name); });

}  // namespace
}  // namespace flexkit::sim
