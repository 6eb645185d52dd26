// flexsim record (the shim and its install) and flexsim check-shapes,
// through the flexsim CLI and the shim binary as a cluster would run them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "simulator/options_builder.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using flexkit::testing::BuiltBinary;
using flexkit::testing::RunProcess;
using flexkit::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<nlohmann::json> Records(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A plugin dir holding one driver script, `test~rec/rec`.
class SimulatorRecord : public ::testing::Test {
 protected:
  void WriteDriver(const std::string& script) {
    fs::create_directories(Folder());
    std::ofstream(Exe()) << "#!/bin/sh\n" << script;
    ::chmod(Exe().c_str(), 0755);
  }
  std::string Folder() const { return dir.Join("plugins/test~rec"); }
  std::string Exe() const { return Folder() + "/rec"; }
  std::string Log() const { return dir.Join("log/calls.jsonl"); }
  flexkit::testing::ProcessResult Flexsim(std::vector<std::string> args) {
    args.insert(args.begin(), BuiltBinary("simulator/flexsim"));
    return RunProcess(args);
  }
  flexkit::testing::ProcessResult Install() {
    return Flexsim({"record", "install", "--plugin-dir", dir.Join("plugins"), "--driver",
                    "test~rec", "--log", Log()});
  }
  // The installed name run as kubelet runs it: one pipe for stdout and stderr.
  flexkit::testing::ProcessResult CallCombined(const std::string& args) {
    return RunProcess({"/bin/sh", "-c", "\"$0\" " + args + " 2>&1", Exe()});
  }
  TempDir dir;
};

TEST_F(SimulatorRecord, InstallKeepsTheDriverUnderADotNameAndUninstallPutsItBack) {
  WriteDriver("printf '{\"status\":\"Success\"}\\n'\n");
  const std::string original = flexkit::testing::ReadFileText(Exe());
  auto r = Install();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(flexkit::testing::ReadFileText(Exe()),
            flexkit::testing::ReadFileText(BuiltBinary("simulator/flexsim-record-shim")));
  EXPECT_EQ(flexkit::testing::ReadFileText(Folder() + "/.rec.real"), original);
  for (const auto& e : fs::directory_iterator(Folder()))
    EXPECT_TRUE(e.path().filename() == "rec" || e.path().filename().string()[0] == '.')
        << "the prober would see " << e.path() << " appear";
  r = Flexsim({"record", "uninstall", "--plugin-dir", dir.Join("plugins"), "--driver", "test~rec"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(flexkit::testing::ReadFileText(Exe()), original);
  EXPECT_FALSE(fs::exists(Folder() + "/.rec.real"));
  EXPECT_FALSE(fs::exists(Folder() + "/.rec.record"));
}

TEST_F(SimulatorRecord, InstallingTwiceOrOnAMissingDriverChangesNothing) {
  auto missing = Install();
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("test~rec/rec"));
  WriteDriver("printf '{\"status\":\"Success\"}\\n'\n");
  ASSERT_EQ(Install().exit_code, 0);
  const std::string shim = flexkit::testing::ReadFileText(Exe());
  auto twice = Install();
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("already installed"));
  EXPECT_EQ(flexkit::testing::ReadFileText(Exe()), shim);
}

TEST_F(SimulatorRecord, TheShimPassesOutputAndExitStatusThroughUnchanged) {
  WriteDriver(
      "printf '{\"status\":'; printf 'oops' >&2; printf '\"Failure\"}\\n'; echo tail >&2; "
      "exit 3\n");
  const flexkit::testing::ProcessResult direct = CallCombined("mount /x '{}'");
  ASSERT_EQ(Install().exit_code, 0);
  const flexkit::testing::ProcessResult shimmed = CallCombined("mount /x '{}'");
  EXPECT_EQ(shimmed.exit_code, 3);
  EXPECT_EQ(shimmed.out, direct.out) << "the interleaving of both streams is kept";
  EXPECT_EQ(shimmed.err, "");
  const auto records = Records(Log());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["verb"], "mount");
  EXPECT_EQ(records[0]["argv"], nlohmann::json({"mount", "/x", "{}"}));
  EXPECT_EQ(records[0]["options"], nlohmann::json::object());
  EXPECT_EQ(records[0]["exit"]["code"], 3);
  EXPECT_EQ(records[0]["output"], direct.out);
  EXPECT_TRUE(records[0]["combined"].get<bool>());
  EXPECT_TRUE(records[0]["env"]["values"].contains("PATH"));
}

TEST_F(SimulatorRecord, TheDriverSeesKubeletsArgvZeroAndItsOwnFolder) {
  WriteDriver(
      "printf '{\"status\":\"Success\",\"message\":\"%s %s\"}\\n' \"$(basename \"$(dirname "
      "\"$0\")\")\" \"$1\"\n");
  ASSERT_EQ(Install().exit_code, 0);
  EXPECT_EQ(CallCombined("init").out, "{\"status\":\"Success\",\"message\":\"test~rec init\"}\n");
}

TEST_F(SimulatorRecord, SignalsReachTheDriverAndTheShimEndsAsItDid) {
  // kubelet's waitforattach timer sends SIGTERM to the process it started;
  // the driver says when its trap is set, so a slow start cannot race it.
  // It polls in short sleeps rather than `wait`: a shell runs its trap once
  // the foreground command ends, and a TERM that lands just before `wait`
  // starts could otherwise sit unhandled until the background job ends.
  WriteDriver(
      "trap 'printf \"{\\\"status\\\":\\\"Failure\\\"}\\n\"; exit 7' TERM\n"
      ": > \"$READY\"\n"
      "i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n");
  ASSERT_EQ(Install().exit_code, 0);
  flexkit::testing::RunOptions options;
  options.extra_env = {{"READY", dir.Join("ready")}};
  auto r = RunProcess({"/bin/sh", "-c",
                       "\"$0\" waitforattach '' '{}' & i=0; while [ ! -e \"$READY\" ] && "
                       "[ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; kill -TERM $!; wait $!",
                       Exe()},
                      options);
  EXPECT_EQ(r.exit_code, 7) << r.out << r.err;
  std::ofstream(Folder() + "/.rec.real", std::ios::trunc) << "#!/bin/sh\nkill -KILL $$\n";
  auto killed = RunProcess({Exe(), "init"});
  EXPECT_EQ(killed.term_signal, SIGKILL);
}

TEST_F(SimulatorRecord, ALogItCannotWriteNeverChangesTheCall) {
  WriteDriver("printf '{\"status\":\"Success\"}\\n'\n");
  auto r = Flexsim({"record", "install", "--plugin-dir", dir.Join("plugins"), "--driver",
                    "test~rec", "--log", "/proc/flexsim-cannot-write/calls.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto call = CallCombined("init");
  EXPECT_EQ(call.exit_code, 0);
  EXPECT_EQ(call.out, "{\"status\":\"Success\"}\n");
}

TEST_F(SimulatorRecord, SecretsNeverReachTheLog) {
  // A careless driver that echoes the secret, decoded, in its reply.
  WriteDriver(
      "s=$(printf '%s' \"$3\" | sed 's/.*secret\\/password\":\"\\([^\"]*\\)\".*/\\1/' | base64 "
      "-d)\n"
      "printf '{\"status\":\"Failure\",\"message\":\"bad password %s\"}\\n' \"$s\"\nexit 1\n");
  ASSERT_EQ(Install().exit_code, 0);
  const std::string raw = "hunter2-correct-horse";
  const std::string encoded = flexkit::sim::Base64(raw);
  const std::string json = "{\"kubernetes.io/secret/password\":\"" + encoded + "\"}";
  auto r = RunProcess({Exe(), "mount", "/x", json});
  EXPECT_THAT(r.out, HasSubstr(raw)) << "the call itself is unchanged";
  const std::string log = flexkit::testing::ReadFileText(Log());
  EXPECT_THAT(log, Not(HasSubstr(raw)));
  EXPECT_THAT(log, Not(HasSubstr(encoded)));
  EXPECT_THAT(log, HasSubstr("flexsim-redacted"));
}

// A log of calls shaped as current kubelet makes them for a mount-only
// driver test/rec, one per line.
const char* kCurrentCalls[] = {
    R"({"time":"t","argv":["init"],"exit":{"code":0,"signal":0},"output":"{\"status\":\"Success\"}"})",
    R"({"time":"t","argv":["mount","/var/lib/kubelet/pods/u1/volumes/test~rec/data","{\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pod.name\":\"web\",\"kubernetes.io/pod.namespace\":\"default\",\"kubernetes.io/pod.uid\":\"u1\",\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"kubernetes.io/secret/password\":\"flexsim-redacted\",\"kubernetes.io/serviceAccount.name\":\"default\",\"server\":\"a\\u0026b\"}"],"exit":{"code":0,"signal":0},"output":""})",
    R"({"time":"t","argv":["unmount","/var/lib/kubelet/pods/u1/volumes/test~rec/data"],"exit":{"code":0,"signal":0},"output":""})"};

class SimulatorShapes : public ::testing::Test {
 protected:
  flexkit::testing::ProcessResult Check(const std::vector<std::string>& lines) {
    std::ofstream out(dir.Join("log.jsonl"));
    for (const auto& l : lines) out << l << "\n";
    out.close();
    return RunProcess({BuiltBinary("simulator/flexsim"), "check-shapes", dir.Join("log.jsonl")});
  }
  static std::vector<std::string> Current() {
    return {std::begin(kCurrentCalls), std::end(kCurrentCalls)};
  }
  TempDir dir;
};

TEST_F(SimulatorShapes, CallsAsCurrentKubeletMakesThemHaveNoGap) {
  auto r = Check(Current());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 recorded calls, 0 fidelity gaps"));
}

TEST_F(SimulatorShapes, AnOptionKeyFlexsimDoesNotSendIsAGap) {
  auto lines = Current();
  lines.push_back(
      R"({"argv":["attach","{\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pod.name\":\"web\",\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\"}","node-1"],"exit":{"code":0,"signal":0},"output":""})");
  auto r = Check(lines);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr(":4: attach: kubelet sent option kubernetes.io/pod.name to attach"));
}

TEST_F(SimulatorShapes, KeyOrderAndEscapingAreCompared) {
  auto lines = Current();
  // Unsorted keys and an unescaped '&': what a hand-rolled encoder would send.
  lines[1] =
      R"({"argv":["mount","/var/lib/kubelet/pods/u1/volumes/test~rec/data","{\"server\":\"a&b\",\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pod.name\":\"web\",\"kubernetes.io/pod.namespace\":\"default\",\"kubernetes.io/pod.uid\":\"u1\",\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"kubernetes.io/secret/password\":\"flexsim-redacted\",\"kubernetes.io/serviceAccount.name\":\"default\"}"],"exit":{"code":0,"signal":0},"output":""})";
  auto r = Check(lines);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr(":2: mount: the same options in other bytes"));
}

TEST_F(SimulatorShapes, ArityPathsAndUnknownVerbsAreGaps) {
  auto lines = Current();
  lines.push_back(
      R"({"argv":["unmount","/var/lib/kubelet/pods/u1/volumes/test~rec/data","extra"],"exit":{"code":0,"signal":0},"output":""})");
  lines.push_back(
      R"({"argv":["unmount","/mnt/elsewhere"],"exit":{"code":0,"signal":0},"output":""})");
  lines.push_back(
      R"({"argv":["getdevicemountpath","{}"],"exit":{"code":0,"signal":0},"output":""})");
  lines.push_back(
      R"({"argv":["detach","/dev/xvdf","node-1"],"exit":{"code":0,"signal":0},"output":""})");
  auto r = Check(lines);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(
      r.out, HasSubstr(":4: unmount: kubelet passed 2 arguments after the verb, flexsim passes 1"));
  EXPECT_THAT(r.out, HasSubstr(":5: unmount: '/mnt/elsewhere' is not kubelet's pod volume dir"));
  EXPECT_THAT(r.out, HasSubstr(":6: getdevicemountpath: flexsim's current profile never calls"));
  EXPECT_THAT(r.out, HasSubstr(":7: detach: detach got '/dev/xvdf'"));
}

TEST_F(SimulatorShapes, AnOlderKubeletsFsGroupKeyIsAGapForCurrent) {
  auto lines = Current();
  lines[1] =
      R"({"argv":["mount","/var/lib/kubelet/pods/u1/volumes/test~rec/data","{\"kubernetes.io/fsGroup\":\"2000\",\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pod.name\":\"web\",\"kubernetes.io/pod.namespace\":\"default\",\"kubernetes.io/pod.uid\":\"u1\",\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"kubernetes.io/serviceAccount.name\":\"default\"}"],"exit":{"code":0,"signal":0},"output":""})";
  auto r = Check(lines);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("kubelet sent option kubernetes.io/fsGroup to mount"));
  EXPECT_THAT(r.out, HasSubstr("sends option kubernetes.io/mounterArgs.FsGroup"));
}

TEST_F(SimulatorShapes, AMalformedLogIsAUsageErrorNamingTheLine) {
  auto r = Check({kCurrentCalls[0], "not json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("log.jsonl:2: not a flexsim-record-shim record"));
}

}  // namespace
