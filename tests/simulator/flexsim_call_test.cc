// The real flexsim binary calling real shell drivers, one per row of the
// decision table (reference §3.2) and per harness verdict; and flexsim judge.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/simulator/test_paths.h"
#include "tests/support/temp_dir.h"

namespace flexkit::sim {
namespace {

using flexkit::testing::RunProcess;
using sim::testing::Flexsim;
using sim::testing::TestDriver;

struct Call {
  flexkit::testing::ProcessResult process;
  nlohmann::json record;
  const nlohmann::json& verdict() const { return record.at("verdict"); }
};

Call RunDriver(const std::string& driver, std::vector<std::string> args) {
  std::vector<std::string> argv = {Flexsim(), "call", "--driver", driver};
  argv.insert(argv.end(), args.begin(), args.end());
  Call c;
  c.process = RunProcess(argv);
  c.record = nlohmann::json::parse(c.process.out, nullptr, false);
  return c;
}

Call RunCall(const std::string& driver_dir, std::vector<std::string> args) {
  return RunDriver(TestDriver(driver_dir), std::move(args));
}

// A private copy of a test driver, so that its path identifies this test's
// processes even when other tests run the same driver concurrently.
std::string CopyDriver(const std::string& driver_dir, const flexkit::testing::TempDir& dir) {
  std::string dest = dir.Join(driver_dir);
  std::filesystem::create_directories(dest);
  dest += "/" + std::filesystem::path(TestDriver(driver_dir)).filename().string();
  std::filesystem::copy_file(TestDriver(driver_dir), dest);
  return dest;
}

// Nothing of a call outlives it: no process still running the driver, no
// mount of a flexsim run in our namespace.
void ExpectNothingLeft(const std::string& needle) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = flexkit::testing::ReadFileText(entry.path().string() + "/cmdline");
    EXPECT_EQ(cmdline.find(needle), std::string::npos)
        << "process " << name << " left: " << cmdline;
  }
  EXPECT_EQ(flexkit::testing::ReadFileText("/proc/self/mountinfo").find("flexsim-call-"),
            std::string::npos);
}

class SimulatorFlexsimCall : public ::testing::Test {
 protected:
  void SetUp() override { FLEXKIT_REQUIRE_ROOT(); }
};

// Command lines: what kubelet would never run, or a judge of nothing, is
// a usage error (exit 2), never a verdict; --version prints flexsim's version.
TEST_F(SimulatorFlexsimCall, UsageErrorsExitTwoAndAreNeverJudged) {
  flexkit::testing::TempDir dir("flexsim-usage");
  auto missing = RunDriver(dir.Join("vendor~none/none"), {"init"});
  EXPECT_EQ(missing.process.exit_code, 2) << missing.process.out;
  EXPECT_NE(missing.process.err.find("not found"), std::string::npos) << missing.process.err;
  EXPECT_TRUE(missing.record.is_discarded()) << "no verdict is printed";
  auto judge_dir = RunProcess({Flexsim(), "judge", "--verb", "init", "--output", dir.path()});
  EXPECT_EQ(judge_dir.exit_code, 2) << judge_dir.out;
  std::ofstream(dir.Join("out")) << "{\"status\":\"Success\"}";
  auto judge = [&](const std::string& code) {
    return RunProcess(
        {Flexsim(), "judge", "--verb", "init", "--output", dir.Join("out"), "--exit-code", code});
  };
  EXPECT_EQ(judge("0").exit_code, 0);
  EXPECT_EQ(judge("256").exit_code, 2) << "no process exits 256";
  auto version = RunProcess({Flexsim(), "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string("flexsim ") + FLEXKIT_VERSION + "\n");
}

TEST_F(SimulatorFlexsimCall, GoodDriverInitSucceedsWithCapabilities) {
  Call c = RunCall("k8s~dummy", {"init"});
  ASSERT_EQ(c.process.exit_code, 0) << c.process.err;
  EXPECT_EQ(c.verdict()["outcome"], "success");
  EXPECT_EQ(c.verdict()["capabilities"]["attach"], false);
  EXPECT_EQ(c.verdict()["capabilities"]["fsGroup"], true);
  EXPECT_EQ(c.record["argv"], nlohmann::json({TestDriver("k8s~dummy"), "init"}));
}

TEST_F(SimulatorFlexsimCall, MountHappensInTheNodeNamespaceOnly) {
  flexkit::testing::TempDir run("flexsim-call-test");
  Call c = RunCall("k8s~dummy", {"mount", "--run-dir", run.path()});
  ASSERT_EQ(c.process.exit_code, 0) << c.process.out << c.process.err;
  std::string pod_dir =
      run.path() + "/nodes/node-1/var/lib/kubelet/pods/pod-uid-1/volumes/k8s~dummy/vol1";
  ASSERT_EQ(c.record["mounts_added"].size(), 1u) << c.record.dump();
  EXPECT_EQ(c.record["mounts_added"][0]["target"], pod_dir);
  EXPECT_EQ(c.record["mounts_added"][0]["type"], "tmpfs");
  EXPECT_EQ(flexkit::testing::ReadFileText("/proc/self/mountinfo").find(run.path()),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(pod_dir + "/index.html"));  // it was on the node's tmpfs
}

TEST_F(SimulatorFlexsimCall, LogLineOnStderrIsADecodeError) {
  Call c = RunCall("test~logs-stderr", {"init"});
  EXPECT_EQ(c.process.exit_code, 1);
  EXPECT_EQ(c.verdict()["outcome"], "decode_error");
  // One pipe, as CombinedOutput: the log line comes first, as written.
  ASSERT_EQ(c.record["output"].size(), 1u);
  EXPECT_EQ(c.record["output"][0]["stream"], "stdout+stderr");
  EXPECT_EQ(c.verdict()["error"], "invalid character 'I' looking for beginning of value");
}

// A reply split across fd 1 and fd 2 in alternation is one document to
// kubelet (driver-call.go Run: cmd.CombinedOutput()).
TEST_F(SimulatorFlexsimCall, ReplyAlternatingBetweenStreamsIsReadInWriteOrder) {
  Call c = RunCall("test~alternating", {"init"});
  ASSERT_EQ(c.process.exit_code, 0) << c.process.out;
  EXPECT_EQ(c.verdict()["outcome"], "success");
  EXPECT_EQ(c.verdict()["message"], "from both streams");
}

TEST_F(SimulatorFlexsimCall, EchoDashNeIsADecodeError) {
  Call c = RunCall("test~echo-ne", {"init"});
  EXPECT_EQ(c.verdict()["outcome"], "decode_error");
  EXPECT_EQ(c.verdict()["error"], "invalid character 'n' in numeric literal");
}

TEST_F(SimulatorFlexsimCall, QuotedBooleansAreADecodeError) {
  Call c = RunCall("test~quoted-bools", {"init"});
  EXPECT_EQ(c.verdict()["outcome"], "decode_error");
  EXPECT_EQ(c.verdict()["capabilities"], nullptr);
}

TEST_F(SimulatorFlexsimCall, SuccessWithExit1IsTheExecError) {
  Call c = RunCall("test~success-exit1", {"mount", "--strict"});
  EXPECT_EQ(c.process.exit_code, 1);
  EXPECT_EQ(c.verdict()["outcome"], "failure");
  EXPECT_EQ(c.verdict()["error"], "exit status 1");
  EXPECT_FALSE(c.verdict()["warnings"].empty());
}

TEST_F(SimulatorFlexsimCall, FailureWithExit0IsAFailure) {
  Call c = RunCall("test~failure-exit0", {"attach"});
  EXPECT_EQ(c.process.exit_code, 1);
  EXPECT_EQ(c.verdict()["error"],
            "attach command failed, status: Failure, reason: backend unreachable");
}

TEST_F(SimulatorFlexsimCall, FailureWithExit1IsAFailure) {
  Call c = RunCall("test~failure-exit1", {"init"});
  EXPECT_EQ(c.verdict()["outcome"], "failure");
  EXPECT_EQ(c.record["exit_code"], 1);
  EXPECT_EQ(c.record["argv"], nlohmann::json({TestDriver("test~failure-exit1"), "init"}));
}

TEST_F(SimulatorFlexsimCall, NotSupportedWithExit1IsNotSupported) {
  Call c = RunCall("test~not-supported-exit1", {"getvolumename"});
  EXPECT_EQ(c.process.exit_code, 0);
  EXPECT_EQ(c.verdict()["outcome"], "not_supported");
}

TEST_F(SimulatorFlexsimCall, UsageTextIsADecodeError) {
  Call c = RunCall("test~garbage", {"isattached"});
  EXPECT_EQ(c.verdict()["outcome"], "decode_error");
  EXPECT_EQ(c.record["exit_code"], 2);
}

TEST_F(SimulatorFlexsimCall, NoOutputIsUnexpectedEnd) {
  Call c = RunCall("test~silent", {"attach"});
  EXPECT_EQ(c.verdict()["error"], "unexpected end of JSON input");
}

TEST_F(SimulatorFlexsimCall, KilledBySignalAfterSuccess) {
  Call c = RunCall("test~killed", {"init"});
  EXPECT_EQ(c.record["signal"], 9);
  EXPECT_EQ(c.verdict()["error"], "signal: killed");
}

TEST_F(SimulatorFlexsimCall, HangingDriverWouldHangKubeletAndIsKilled) {
  flexkit::testing::TempDir dir("flexsim-hangs");
  std::string driver = CopyDriver("test~hangs", dir);
  Call c = RunDriver(driver, {"mount", "--timeout", "0.3"});
  EXPECT_EQ(c.process.exit_code, 3);
  EXPECT_NE(c.record["harness_problem"].get<std::string>().find("would hang kubelet"),
            std::string::npos);
  ExpectNothingLeft(driver);
}

TEST_F(SimulatorFlexsimCall, BackgroundChildHoldingStdoutIsReported) {
  flexkit::testing::TempDir dir("flexsim-holds");
  std::string driver = CopyDriver("test~holds-stdout", dir);
  Call c = RunDriver(driver, {"init"});
  EXPECT_EQ(c.process.exit_code, 3);
  EXPECT_NE(c.record["harness_problem"].get<std::string>().find("keeps its stdout/stderr open"),
            std::string::npos);
  ExpectNothingLeft(driver);
}

// driver-call.go Run + k8s.io/utils exec cmdWrapper.Stop: SIGTERM at the
// timeout; a driver it kills gives kubelet's "timeout" error.
TEST_F(SimulatorFlexsimCall, WaitForAttachTimeoutIsKubeletsTimeoutError) {
  Call c = RunCall("test~slow-attach", {"waitforattach", "/dev/x", "--waitforattach-timeout", "0.2",
                                        "--env", "TRAP_TERM=die"});
  EXPECT_EQ(c.process.exit_code, 1) << c.process.out;
  EXPECT_EQ(c.verdict()["outcome"], "failure");
  EXPECT_EQ(c.verdict()["error"], "timeout");
  EXPECT_EQ(c.record["signal"], SIGTERM);
}

// test~slow-attach ignoring SIGTERM, written into `dir` (its path names
// this test's processes) so it says when its trap is set: it writes $READY
// right after.
std::string WriteTermIgnoringDriver(const flexkit::testing::TempDir& dir) {
  std::string dest = dir.Join("test~slow-attach");
  std::filesystem::create_directories(dest);
  dest += "/slow-attach";
  std::ofstream(dest) << "#!/bin/sh\n"
                         "case \"$1\" in\n"
                         "  init) printf '{\"status\":\"Success\"}\\n'; exit 0 ;;\n"
                         "  waitforattach)\n"
                         "    trap '' TERM\n"
                         "    : > \"$READY\"\n"
                         "    while :; do sleep 0.05; done ;;\n"
                         "  *) printf '{\"status\":\"Not supported\"}\\n' ;;\n"
                         "esac\n";
  std::filesystem::permissions(dest, std::filesystem::perms::owner_all);
  return dest;
}

std::string SecondsArg(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(d.count()) / 1000);
  return text;
}

// cmdWrapper.Stop's SIGKILL only fires once ProcessState is set (the driver
// was reaped): a driver ignoring SIGTERM is never killed by kubelet, whose
// CombinedOutput waits forever. Only the harness deadline ends it.
TEST_F(SimulatorFlexsimCall, WaitForAttachIgnoringTermWouldHangKubelet) {
  flexkit::testing::TempDir dir("flexsim-slow");
  const std::string driver = WriteTermIgnoringDriver(dir);
  const std::string ready = dir.Join("ready");
  // flexsim's kubelet timer starts when it launches the driver and cannot
  // wait for the driver's trap: a TERM that lands before it kills the
  // driver, a run that proves nothing about flexsim. Such a run (no READY
  // file) is repeated with the timer doubled; the first run in which the
  // driver was ready is judged.
  std::chrono::milliseconds term_after(200);
  const std::chrono::milliseconds harness_after_term(1300);
  Call c;
  std::chrono::steady_clock::duration took{};
  for (int attempt = 1;; ++attempt, term_after *= 2) {
    std::filesystem::remove(ready);
    const auto start = std::chrono::steady_clock::now();
    c = RunDriver(
        driver, {"waitforattach", "/dev/x", "--env", "READY=" + ready, "--waitforattach-timeout",
                 SecondsArg(term_after), "--timeout", SecondsArg(term_after + harness_after_term)});
    took = std::chrono::steady_clock::now() - start;
    if (std::filesystem::exists(ready)) break;
    ASSERT_LT(attempt, 5) << "the driver never set its trap before kubelet's TERM, the last time "
                          << term_after.count() << " ms after its start";
  }
  // A lower bound, which load cannot break: the harness let the driver run
  // to its own deadline, long after kubelet's TERM.
  EXPECT_GE(took, term_after + harness_after_term);
  EXPECT_EQ(c.process.exit_code, 3) << c.process.out;
  EXPECT_EQ(c.record["signal"], SIGKILL);  // the harness's, at its deadline
  EXPECT_NE(c.record["harness_problem"].get<std::string>().find("never sends SIGKILL"),
            std::string::npos);
  ExpectNothingLeft(driver);
}

TEST_F(SimulatorFlexsimCall, OutputFloodIsCapped) {
  Call c = RunCall("test~flood", {"init", "--output-cap", "65536"});
  EXPECT_EQ(c.process.exit_code, 3);
  EXPECT_NE(c.record["harness_problem"].get<std::string>().find("65536-byte cap"),
            std::string::npos);
}

// At the default 16 MiB cap the record would print 16 MiB to a terminal:
// each text is cut to its head and tail, saying the size.
TEST_F(SimulatorFlexsimCall, OutputFloodPrintsItsHeadAndTailAndItsSize) {
  Call c = RunCall("test~flood", {"init"});
  EXPECT_EQ(c.process.exit_code, 3);
  EXPECT_LT(c.process.out.size(), 256u * 1024) << "the whole flood was printed";
  ASSERT_FALSE(c.record.is_discarded()) << c.process.out.substr(0, 2000);
  const std::string out = c.record.dump();
  std::smatch cut;
  ASSERT_TRUE(std::regex_search(out, cut, std::regex("of ([0-9]+) bytes cut")))
      << out.substr(0, 2000);
  EXPECT_GE(std::stoull(cut[1]), 16u << 20);
  EXPECT_NE(out.find(R"({\"status\":\"Success\"})"), std::string::npos);
}

// flexsim --help states the exit codes call returns: 1 the operation
// failed, 3 the harness stopped the driver.
TEST_F(SimulatorFlexsimCall, HelpStatesTheExitCodesCallReturns) {
  auto help = RunProcess({Flexsim(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("call: the kubelet operation"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("3 call: the harness had to stop the driver"), std::string::npos)
      << help.out;
}

TEST_F(SimulatorFlexsimCall, DriverSeesKubeletArgvEnvAndItsOwnNamespace) {
  flexkit::testing::TempDir dir("flexsim-inspect");
  Call c = RunCall("test~inspect", {"mount", "--profile", "1.15", "-o", "a<b=x&y", "--fs-group",
                                    "7", "--env", "INSPECT_DIR=" + dir.path(), "--env",
                                    "INSPECT_VALUE=node-env", "--pod-uid", "u1", "--read-only"});
  ASSERT_EQ(c.process.exit_code, 0) << c.process.out << c.process.err;
  std::string argv = flexkit::testing::ReadFileText(dir.Join("argv"));
  EXPECT_NE(argv.find(std::string("\0mount\0", 7)), std::string::npos);
  EXPECT_NE(
      argv.find(
          R"({"a\u003cb":"x\u0026y","kubernetes.io/fsType":"","kubernetes.io/mounterArgs.FsGroup":"7","kubernetes.io/pod.name":"pod-1","kubernetes.io/pod.namespace":"default","kubernetes.io/pod.uid":"u1","kubernetes.io/pvOrVolumeName":"vol1","kubernetes.io/readwrite":"ro","kubernetes.io/serviceAccount.name":"default"})"),
      std::string::npos)
      << argv;
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("env")), "node-env");
  EXPECT_EQ(flexkit::testing::ReadFileText(dir.Join("stdin")), "/dev/null\n");
  EXPECT_NE(flexkit::testing::ReadFileText(dir.Join("mntns")),
            std::filesystem::read_symlink("/proc/self/ns/mnt").string() + "\n");
  EXPECT_EQ(c.record["env_changes"]["INSPECT_VALUE"], "node-env");
}

TEST_F(SimulatorFlexsimCall, SecretsNeverReachTheTranscript) {
  flexkit::testing::TempDir dir("flexsim-secret");
  std::string transcript = dir.Join("t.json");
  Call c = RunCall("test~inspect", {"mount", "--secret", "password=hunter2", "--env",
                                    "INSPECT_DIR=" + dir.path(), "--transcript", transcript});
  ASSERT_EQ(c.process.exit_code, 0) << c.process.err;
  EXPECT_NE(flexkit::testing::ReadFileText(dir.Join("argv")).find("aHVudGVyMg=="),
            std::string::npos);  // the driver got it
  for (const std::string& text :
       {flexkit::testing::ReadFileText(transcript), c.process.out, c.process.err}) {
    EXPECT_EQ(text.find("hunter2"), std::string::npos);
    EXPECT_EQ(text.find("aHVudGVyMg=="), std::string::npos);
  }
  EXPECT_NE(flexkit::testing::ReadFileText(transcript).find("kubernetes.io/secret/password"),
            std::string::npos);
}

// A driver that is there but cannot start (its interpreter is missing):
// kubelet's exec fails, which flexsim judges as kubelet does.
TEST_F(SimulatorFlexsimCall, DriverThatCannotStartIsAnExecFailure) {
  flexkit::testing::TempDir dir("flexsim-noexec");
  std::filesystem::create_directories(dir.Join("x~y"));
  std::ofstream(dir.Join("x~y/y")) << "#!/nonexistent/interpreter\n";
  std::filesystem::permissions(dir.Join("x~y/y"), std::filesystem::perms::owner_all);
  std::vector<std::string> argv = {Flexsim(), "call", "--driver", dir.Join("x~y/y"), "init"};
  flexkit::testing::ProcessResult p = RunProcess(argv);
  auto record = nlohmann::json::parse(p.out);
  EXPECT_EQ(record["verdict"]["outcome"], "decode_error");
  EXPECT_TRUE(record.contains("spawn_error"));
}

class SimulatorFlexsimJudge : public ::testing::Test {
 protected:
  std::string Judge(const std::string& output, int exit_code, bool strict,
                    const char* verb = "init") {
    std::string file = dir_.Join("out");
    std::ofstream(file, std::ios::binary) << output;
    std::vector<std::string> argv = {Flexsim(),  "judge",       "--verb",
                                     verb,       "--exit-code", std::to_string(exit_code),
                                     "--output", file};
    if (strict) argv.push_back("--strict");
    flexkit::testing::ProcessResult p = RunProcess(argv);
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return p.out;
  }
  flexkit::testing::TempDir dir_{"flexsim-judge"};
};

TEST_F(SimulatorFlexsimJudge, PrintsOneObjectWithTheVerdictKeysInOrder) {
  EXPECT_EQ(
      Judge(R"({"status":"Success","capabilities":{"attach":false}})", 0, false),
      R"({"outcome":"success","status":"Success","message":"","device":"","attached":false,"volumeName":"","capabilities":{"attach":false,"selinuxRelabel":true,"supportsMetrics":false,"fsGroup":true,"requiresFSResize":true},"error":null})"
      "\n");
}

TEST_F(SimulatorFlexsimJudge, DecodeErrorHasNullFields) {
  EXPECT_EQ(
      Judge("oops", 1, false),
      R"({"outcome":"decode_error","status":null,"message":null,"device":null,"attached":null,"volumeName":null,"capabilities":null,"error":"invalid character 'o' looking for beginning of value"})"
      "\n");
}

TEST_F(SimulatorFlexsimJudge, NegativeExitCodeIsASignal) {
  auto j = nlohmann::json::parse(Judge(R"({"status":"Success"})", -15, false, "mount"));
  EXPECT_EQ(j["error"], "signal: terminated");
}

TEST_F(SimulatorFlexsimJudge, StrictAddsWarnings) {
  auto j = nlohmann::json::parse(Judge(R"({"Status":"Not supported"})", 1, true, "mount"));
  EXPECT_EQ(j["outcome"], "not_supported");
  ASSERT_EQ(j["warnings"].size(), 2u);
  auto lax = nlohmann::json::parse(Judge(R"({"Status":"Not supported"})", 1, false, "mount"));
  EXPECT_FALSE(lax.contains("warnings"));
}

}  // namespace
}  // namespace flexkit::sim
