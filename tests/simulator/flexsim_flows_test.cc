// Which driver calls `flexsim call` and `flexsim run` make, in which order,
// and what kubelet does to the directories around them, each row held
// against the Kubernetes function it follows (pkg/volume/flexvolume in
// kubernetes/kubernetes unless named otherwise). The driver is
// tests/data/drivers/test~recorder: it logs every call (verb, state of its
// directory argument, arguments) to $RECORD_FILE.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/simulator/test_paths.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

namespace fs = std::filesystem;
using flexkit::testing::RunProcess;
using sim::testing::Flexsim;
using sim::testing::TestDriver;

// One recorded call: the verb, the state of its directory argument
// ("-" when it has none) and its arguments.
struct Recorded {
  std::string verb;
  std::string dir_state;
  std::vector<std::string> args;
};

std::vector<Recorded> ReadRecord(const std::string& path) {
  std::vector<Recorded> calls;
  std::istringstream in(flexkit::testing::ReadFileText(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::size_t at = 0;
    for (std::size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1) {
      fields.push_back(line.substr(at, tab - at));
    }
    fields.push_back(line.substr(at));
    Recorded r{fields.at(0), fields.at(1), {fields.begin() + 2, fields.end()}};
    calls.push_back(r);
  }
  return calls;
}

// "verb:state" for each call, the shape the table rows compare.
std::vector<std::string> Shape(const std::vector<Recorded>& calls) {
  std::vector<std::string> out;
  for (const auto& c : calls) out.push_back(c.verb + ":" + c.dir_state);
  return out;
}

enum class Prepare { kNothing, kPodDir, kGlobalDir, kPodAndGlobalDir };

struct CallRow {
  const char* name;
  const char* follows;  // the Kubernetes file and function
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  Prepare prepare;
  std::vector<std::string> calls;  // "verb:dir-state" as recorded
  int exit_code;
  std::string error;  // substring of the operation's error; "" = none
  bool pod_dir_after;
  bool global_dir_after;
};

void PrintTo(const CallRow& row, std::ostream* os) { *os << row.name; }

class SimulatorFlows : public ::testing::TestWithParam<CallRow> {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
};

TEST_P(SimulatorFlows, FlexsimCallMakesExactlyKubeletsCalls) {
  const CallRow& row = GetParam();
  SCOPED_TRACE(std::string(row.name) + " (follows " + row.follows + ")");
  flexkit::testing::TempDir dir("flexsim-flows");
  const std::string run = dir.Join("run");
  const std::string record = dir.Join("record");
  const std::string root = run + "/nodes/node-1/var/lib/kubelet";
  const std::string pod_dir = root + "/pods/pod-uid-1/volumes/test~recorder/vol1";
  const std::string global = root + "/plugins/kubernetes.io/flexvolume/test/recorder/mounts/vol1";
  if (row.prepare == Prepare::kPodDir || row.prepare == Prepare::kPodAndGlobalDir)
    fs::create_directories(pod_dir);
  if (row.prepare == Prepare::kGlobalDir || row.prepare == Prepare::kPodAndGlobalDir)
    fs::create_directories(global);

  // The verb first: --env takes every value that follows it.
  std::vector<std::string> argv = {Flexsim(), "call", "--driver", TestDriver("test~recorder")};
  argv.insert(argv.end(), row.args.begin(), row.args.end());
  argv.insert(argv.end(), {"--run-dir", run, "--env", "RECORD_FILE=" + record});
  for (const auto& [k, v] : row.env) argv.push_back(k + "=" + v);
  flexkit::testing::ProcessResult p = RunProcess(argv);
  auto out = nlohmann::json::parse(p.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << p.out << p.err;

  EXPECT_EQ(Shape(ReadRecord(record)), row.calls) << out.dump(2);
  EXPECT_EQ(p.exit_code, row.exit_code) << out.dump(2);
  if (row.error.empty()) {
    EXPECT_TRUE(out["error"].is_null()) << out.dump(2);
  } else {
    ASSERT_TRUE(out["error"].is_string()) << out.dump(2);
    EXPECT_NE(out["error"].get<std::string>().find(row.error), std::string::npos) << out.dump(2);
  }
  EXPECT_EQ(fs::exists(pod_dir), row.pod_dir_after) << out.dump(2);
  EXPECT_EQ(fs::exists(global), row.global_dir_after) << out.dump(2);
}

const std::map<std::string, std::string> kMountNotSupported = {{"REPLY_mount", "notsupported"}};

INSTANTIATE_TEST_SUITE_P(
    SimulatorFlowTable, SimulatorFlows,
    ::testing::Values(
        CallRow{"MountSucceeds",
                "mounter.go SetUpAt",
                {"mount"},
                {},
                Prepare::kNothing,
                {"mount:dir"},
                0,
                "",
                true,
                false},
        CallRow{"MountNotSupportedAsksGetVolumeNameThenBinds",
                "mounter.go SetUpAt -> mounter-defaults.go SetUpAt -> plugin.go getDeviceMountPath",
                {"mount"},
                kMountNotSupported,
                Prepare::kGlobalDir,
                {"mount:dir", "getvolumename:-"},
                0,
                "",
                true,
                true},
        CallRow{"MountNotSupportedWithoutDeviceMountPathFailsAndRemovesTheDir",
                "mounter-defaults.go SetUpAt (doMount fails) -> mounter.go SetUpAt os.Remove(dir)",
                {"mount"},
                kMountNotSupported,
                Prepare::kNothing,
                {"mount:dir", "getvolumename:-"},
                1,
                "No such file or directory",
                false,
                false},
        CallRow{"MountNotSupportedAndGetVolumeNameFailing",
                "plugin.go getDeviceMountPath: GetVolumeName failed from getDeviceMountPath",
                {"mount"},
                {{"REPLY_mount", "notsupported"}, {"REPLY_getvolumename", "failure"}},
                Prepare::kGlobalDir,
                {"mount:dir", "getvolumename:-"},
                1,
                "GetVolumeName failed from getDeviceMountPath: getvolumename command failed",
                false,
                true},
        CallRow{"MountFailureRemovesTheDir",
                "mounter.go SetUpAt: os.Remove(dir) on error",
                {"mount"},
                {{"REPLY_mount", "failure"}},
                Prepare::kNothing,
                {"mount:dir"},
                1,
                "mount command failed",
                false,
                false},
        CallRow{"UnmountOfAMissingDirIsSkipped",
                "unmounter.go TearDownAt: Unmount skipped because path does not exist",
                {"unmount"},
                {},
                Prepare::kNothing,
                {},
                0,
                "",
                false,
                false},
        CallRow{"UnmountSuccessRemovesTheDir",
                "unmounter.go TearDownAt: os.Remove(dir)",
                {"unmount"},
                {},
                Prepare::kPodDir,
                {"unmount:dir"},
                0,
                "",
                false,
                false},
        CallRow{"UnmountDriverRemovingTheDirIsTolerated",
                "unmounter.go TearDownAt: driver may remove the directory",
                {"unmount"},
                {{"REMOVES_DIR", "1"}},
                Prepare::kPodDir,
                {"unmount:dir"},
                0,
                "",
                false,
                false},
        CallRow{"UnmountNotSupportedCleansUpTheMountPoint",
                "unmounter-defaults.go TearDownAt: mount-utils CleanupMountPoint",
                {"unmount"},
                {{"REPLY_unmount", "notsupported"}},
                Prepare::kPodDir,
                {"unmount:dir"},
                0,
                "",
                false,
                false},
        CallRow{"UnmountFailureKeepsTheDir",
                "unmounter.go TearDownAt: return err",
                {"unmount"},
                {{"REPLY_unmount", "failure"}},
                Prepare::kPodDir,
                {"unmount:dir"},
                1,
                "unmount command failed",
                true,
                false},
        CallRow{"UnmountDeviceOfAMissingPathIsSkipped",
                "operation_generator.go GenerateUnmountDeviceFunc (GetDeviceMountPath) -> "
                "detacher.go UnmountDevice: Unmount skipped because path does not exist",
                {"unmountdevice"},
                {},
                Prepare::kNothing,
                {"getvolumename:-"},
                0,
                "",
                false,
                false},
        CallRow{"UnmountDeviceOfANonMountPointIsSkippedAndThePathRemoved",
                "operation_generator.go GenerateUnmountDeviceFunc (GetDeviceMountPath) -> "
                "detacher.go UnmountDevice: already unmounted, os.Remove",
                {"unmountdevice"},
                {},
                Prepare::kGlobalDir,
                {"getvolumename:-"},
                0,
                "",
                false,
                false},
        CallRow{"MountDeviceSucceeds",
                "operation_generator.go GenerateMountVolumeFunc (GetDeviceMountPath) -> "
                "attacher.go MountDevice",
                {"mountdevice", "/dev/recorded"},
                {},
                Prepare::kNothing,
                {"getvolumename:-", "mountdevice:dir"},
                0,
                "",
                false,
                true},
        CallRow{"ExpandVolumeAsksGetVolumeNameFirst",
                "expander.go ExpandVolumeDevice -> plugin.go getDeviceMountPath",
                {"expandvolume", "2048", "1024", "--pv"},
                {},
                Prepare::kNothing,
                {"getvolumename:-", "expandvolume:missing"},
                0,
                "",
                false,
                false},
        CallRow{"ExpandVolumeNotCalledWhenGetVolumeNameFails",
                "expander.go ExpandVolumeDevice: getDeviceMountPath error",
                {"expandvolume", "2048", "1024", "--pv"},
                {{"REPLY_getvolumename", "failure"}},
                Prepare::kNothing,
                {"getvolumename:-"},
                1,
                "GetVolumeName failed from getDeviceMountPath",
                false,
                false},
        CallRow{"ExpandFsNeverForAnInlineVolume",
                "expander.go NodeExpand: PersistentVolume not found for spec",
                {"expandfs", "2048", "1024"},
                {},
                Prepare::kNothing,
                {},
                1,
                "PersistentVolume not found for spec: vol1",
                false,
                false},
        CallRow{"ExpandFsForAPersistentVolume",
                "expander.go NodeExpand",
                {"expandfs", "2048", "1024", "/dev/recorded", "--pv"},
                {},
                Prepare::kPodDir,
                {"expandfs:dir"},
                0,
                "",
                true,
                false}),
    [](const ::testing::TestParamInfo<CallRow>& row) { return std::string(row.param.name); });

// mount's getvolumename carries the options without pod keys or secrets
// (plugin.go GetVolumeName: call.AppendSpec(spec, host, nil)).
TEST(SimulatorFlowsCall, FallbackGetVolumeNameHasNoPodKeysOrSecrets) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexsim-flows");
  const std::string record = dir.Join("record");
  flexkit::testing::ProcessResult p = RunProcess(
      {Flexsim(), "call", "--driver", TestDriver("test~recorder"), "--env", "RECORD_FILE=" + record,
       "--env", "REPLY_mount=notsupported", "--secret", "password=hunter22", "mount"});
  auto calls = ReadRecord(record);
  ASSERT_EQ(calls.size(), 2u) << p.out;
  EXPECT_NE(calls[0].args.at(1).find("kubernetes.io/pod.uid"), std::string::npos);
  EXPECT_NE(calls[0].args.at(1).find("kubernetes.io/secret/password"), std::string::npos);
  EXPECT_EQ(
      calls[1].args,
      (std::vector<std::string>{
          R"({"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"vol1","kubernetes.io/readwrite":"rw"})"}));
}

// A secret too short to redact everywhere is redacted as a whole value only,
// and the output says so; ordinary text keeps its letters.
TEST(SimulatorFlowsCall, OneCharacterSecretRedactsOnlyWholeValues) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexsim-flows");
  const std::string transcript = dir.Join("t.json");
  flexkit::testing::ProcessResult p =
      RunProcess({Flexsim(), "call", "--driver", TestDriver("test~recorder"), "--secret", "pin=b",
                  "--transcript", transcript, "mount"});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const std::string t = flexkit::testing::ReadFileText(transcript);
  for (const std::string& text : {t, p.out}) {
    EXPECT_NE(text.find("kubernetes.io/secret/pin\\\":\\\"<redacted>\\\""), std::string::npos)
        << text;
    EXPECT_EQ(text.find("Yg=="), std::string::npos);  // base64 of "b"
    EXPECT_NE(text.find("kubernetes.io/pod.name"), std::string::npos);
    EXPECT_EQ(text.find("ku<redacted>"), std::string::npos);
  }
  EXPECT_NE(p.out.find("too short to redact safely"), std::string::npos) << p.out;
  EXPECT_NE(t.find("secret too short to redact safely"), std::string::npos);
  EXPECT_EQ(t.find("pin=b"), std::string::npos);
}

// flexsim run: the kubelet of a scenario, same recorder, same rules. Each
// row is a one-pod lifecycle (apply, expect mounted, delete, expect gone) on
// node-a; the calls recorded are node-a's (the controller's attach and
// detach run on the control plane, unrecorded).
struct RunRow {
  const char* name;
  const char* follows;
  std::map<std::string, std::string> env;
  std::vector<std::string> calls;
};

void PrintTo(const RunRow& row, std::ostream* os) { *os << row.name; }

class SimulatorFlowsRun : public ::testing::TestWithParam<RunRow> {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
};

TEST_P(SimulatorFlowsRun, FlexsimRunMakesExactlyKubeletsCalls) {
  const RunRow& row = GetParam();
  SCOPED_TRACE(std::string(row.name) + " (follows " + row.follows + ")");
  flexkit::testing::TempDir dir("flexsim-flows-run");
  const std::string scenario = dir.Join("s.yaml");
  const std::string record = dir.Join("record");
  std::ofstream s(scenario);
  s << "driver: " << TestDriver("test~recorder") << "\n"
    << "nodes:\n  - name: node-a\n    env: {RECORD_FILE: " << record;
  for (const auto& [k, v] : row.env) s << ", " << k << ": \"" << v << "\"";
  s << "}\nsteps:\n"
    << "  - apply: |\n"
    << "      kind: Pod\n      metadata: {name: web}\n"
    << "      spec:\n        nodeName: node-a\n"
    << "        volumes: [{name: data, flexVolume: {driver: test/recorder}}]\n"
    << "  - expectVolume: {volume: data, mountedFor: [default/web]}\n"
    << "  - deletePod: web\n"
    << "  - expectVolume: {volume: data, mountedFor: []}\n"
    << "  - expectSettled: true\n";
  s.close();
  flexkit::testing::ProcessResult p =
      RunProcess({Flexsim(), "run", scenario, "--run-dir", dir.Join("run")});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(Shape(ReadRecord(record)), row.calls) << p.err;
}

INSTANTIATE_TEST_SUITE_P(
    SimulatorFlowRunTable, SimulatorFlowsRun,
    ::testing::Values(
        RunRow{
            "AttachableLifecycle",
            "attacher.go WaitForAttach/MountDevice, mounter.go SetUpAt, unmounter.go "
            "TearDownAt, detacher.go UnmountDevice; getvolumename via getDeviceMountPath",
            {},
            {"init:-", "getvolumename:-", "waitforattach:-", "getvolumename:-", "mountdevice:dir",
             "mount:dir", "unmount:mountpoint", "getvolumename:-", "unmountdevice:mountpoint"}},
        RunRow{"MountNotSupportedAsksGetVolumeNameBeforeTheBind",
               "mounter-defaults.go SetUpAt -> plugin.go getDeviceMountPath; "
               "unmounter-defaults.go TearDownAt (CleanupMountPoint)",
               {{"REPLY_mount", "notsupported"}, {"REPLY_unmount", "notsupported"}},
               {"init:-", "getvolumename:-", "waitforattach:-", "getvolumename:-",
                "mountdevice:dir", "mount:dir", "getvolumename:-", "unmount:mountpoint",
                "getvolumename:-", "unmountdevice:mountpoint"}},
        RunRow{
            "UnmountDeviceSkippedWhenNotAMountPoint",
            "detacher.go UnmountDevice: already unmounted, path removed",
            {{"NO_MOUNT", "1"}, {"REPLY_mount", "notsupported"}},
            {"init:-", "getvolumename:-", "waitforattach:-", "getvolumename:-", "mountdevice:dir",
             "mount:dir", "getvolumename:-", "unmount:mountpoint", "getvolumename:-"}},
        RunRow{
            "DriverRemovingItsDirectoriesIsTolerated",
            "unmounter.go TearDownAt / detacher.go UnmountDevice: the driver may remove "
            "the directory",
            {{"REMOVES_DIR", "1"}},
            {"init:-", "getvolumename:-", "waitforattach:-", "getvolumename:-", "mountdevice:dir",
             "mount:dir", "unmount:mountpoint", "getvolumename:-", "unmountdevice:mountpoint"}},
        RunRow{"NonAttachableDriverGetsMountAndUnmountOnly",
               "plugin.go NewFlexVolumePlugin (attach:false: no attacher); reference §7.2",
               {{"ATTACH", "false"}},
               {"init:-", "mount:dir", "unmount:mountpoint"}}),
    [](const ::testing::TestParamInfo<RunRow>& row) { return std::string(row.param.name); });

}  // namespace
}  // namespace flexkit::sim
