// The leak audit blames a case only for what the case made (issue: a
// release gate must never fail for the wrong reason), through the real
// flexconform: a mount another program makes on the host while a case
// runs, copied into a node's namespace when the case restarts the node,
// is not "mount left"; a command fixture's node agent, started by its
// nodeStart hook in each node's namespace, is not "process left".
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "tests/support/flexconform_verdicts.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using flexkit::testing::TempDir;

const std::string kDrivers = FLEXKIT_DRIVERS_DIR;

using Run = flexkit::testing::FlexconformVerdicts;

Run Flexconform(const TempDir& dir, std::vector<std::string> args) {
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(300);
  return flexkit::testing::RunFlexconformVerdicts(dir, std::move(args), options);
}

void WriteExecutable(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

// The case crashes node-1 after the pod's volume is mounted there and
// brings it back later: its fresh namespace copies the host's mounts.
constexpr char kRestartCase[] = "failover/node-returns-before-move-controller";

TEST(FlexconformBlame, AHostMountMadeWhileACaseRunsIsNotTheCases) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-blame");
  TempDir host("flexconform-blame-host");  // outside the run root
  const std::string mount_point = host.Join("tmpfs");
  ::mkdir(mount_point.c_str(), 0700);
  // The clean shared-dir-attach driver, which at its first mountdevice
  // asks for the host mount (another program's, made by this test) and
  // waits until it is there: made after the case's "before" snapshot and
  // before the node's restart, every time.
  const std::string plugin = dir.Join("flexkit~hostmount");
  ::mkdir(plugin.c_str(), 0755);
  ASSERT_EQ(::symlink((kDrivers + "/shared-dir-attach.sh").c_str(), dir.Join("clean").c_str()), 0);
  WriteExecutable(plugin + "/hostmount",
                  "#!/bin/sh\n"
                  "if [ \"$1\" = mountdevice ] && [ ! -e '" +
                      host.Join("asked") +
                      "' ]; then\n"
                      "  : >'" +
                      host.Join("asked") +
                      "'\n"
                      "  i=0; while [ ! -e '" +
                      host.Join("mounted") +
                      "' ] && [ $i -lt 100 ]; do\n"
                      "    sleep 0.05; i=$((i+1)); done\n"
                      "fi\n"
                      "exec '" +
                      dir.Join("clean") + "' \"$@\"\n");
  bool mounted = false;
  std::thread other_program([&] {
    for (int i = 0; i < 6000 && !std::ifstream(host.Join("asked")); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    mounted = ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=1m") == 0;
    std::ofstream(host.Join("mounted")) << "";
  });
  auto run = Flexconform(
      dir, {"--driver", plugin + "/hostmount", "--focus", std::string("^") + kRestartCase + " "});
  other_program.join();
  if (mounted) ::umount2(mount_point.c_str(), MNT_DETACH);
  ASSERT_TRUE(mounted) << "the driver never reached mountdevice: " << run.process.out;
  EXPECT_EQ(run.verdicts[kRestartCase], "PASS") << run.reasons[kRestartCase];
  EXPECT_EQ(run.reasons[kRestartCase].find("mount left"), std::string::npos);
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
}

TEST(FlexconformBlame, ACommandFixturesNodeAgentIsNotALeak) {
  FLEXKIT_REQUIRE_ROOT();
  TempDir dir("flexconform-blame");
  const std::string profile = dir.Join("p.yaml");
  // One agent per node, started in the node's namespace by nodeStart (and
  // again after the node's restart), forking a sleep every 0.1 s.
  std::ofstream(profile)
      << "driver: " << kDrivers << "/shared-dir-attach~clean/clean\n"
      << "nodes: 2\n"
      << "fixture:\n"
      << "  kind: command\n"
      << "  setup: 'true'\n"
      << "  nodeStart: '(while :; do sleep 0.1; done) </dev/null >/dev/null 2>&1 &'\n"
      << "  hookTimeout: 5s\n";
  auto run = Flexconform(dir, {"--profile", profile, "--focus",
                               std::string("^(lifecycle/attachable|") + kRestartCase + ") "});
  ASSERT_EQ(run.verdicts.size(), 2u) << run.process.out << run.process.err;
  for (const auto& [name, verdict] : run.verdicts) {
    EXPECT_EQ(verdict, "PASS") << name << ": " << run.reasons[name];
    EXPECT_EQ(run.reasons[name].find("process left"), std::string::npos) << run.reasons[name];
  }
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out;
}

}  // namespace
