// Process-level tests of ExecDriver through real driver binaries: what
// kubelet sees on the combined output, and the exit code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

flexkit::testing::RunOptions WithEnv(const std::string& name, const std::string& value) {
  flexkit::testing::RunOptions options;
  options.extra_env[name] = value;
  return options;
}

using flexkit::testing::BuiltBinary;
using flexkit::testing::ProcessResult;
using flexkit::testing::RunProcess;
using ::testing::HasSubstr;
using ::testing::Not;

std::string CrashDriver() { return BuiltBinary("tests/driver/sdk/flexkit-crash-driver"); }
std::string TmpfsBinary() { return BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"); }

// Exactly one JSON document, newline-terminated, on stdout; nothing on stderr.
nlohmann::json OneReply(const ProcessResult& r) {
  EXPECT_EQ(r.err, "") << "stderr must stay empty";
  EXPECT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "more than one line: " << r.out;
  return nlohmann::json::parse(r.out);
}

struct CrashCase {
  const char* name;
  std::vector<std::string> args;
  const char* expected_message;
};

void PrintTo(const CrashCase& c, std::ostream* os) { *os << c.name; }

class CrashTest : public ::testing::TestWithParam<CrashCase> {};

TEST_P(CrashTest, PrintsOneFailureAndExitsOne) {
  const CrashCase& c = GetParam();
  std::vector<std::string> argv = {CrashDriver()};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  ProcessResult r = RunProcess(argv);
  ASSERT_EQ(r.term_signal, 0) << "the driver died of a signal instead of replying";
  EXPECT_EQ(r.exit_code, 1);
  nlohmann::json reply = OneReply(r);
  EXPECT_EQ(reply.at("status"), "Failure");
  EXPECT_THAT(reply.at("message").get<std::string>(), HasSubstr(c.expected_message));
}

INSTANTIATE_TEST_SUITE_P(
    Sdk, CrashTest,
    ::testing::Values(
        CrashCase{"exception", {"attach", "{}", "node"}, "attach: attach exploded"},
        CrashCase{"terminate",
                  {"detach", "pv", "node"},
                  "uncaught exception: escaped a noexcept function"},
        CrashCase{"abort", {"mount", "/d", "{}"}, "mount: the driver crashed (SIGABRT)"},
        CrashCase{"null_dereference", {"unmount", "/d"}, "unmount: the driver crashed (SIGSEGV)"},
        CrashCase{"sigfpe", {"isattached", "{}", "node"}, "the driver crashed (SIGFPE)"},
        CrashCase{"sigbus", {"waitforattach", "", "{}"}, "the driver crashed (SIGBUS)"},
        CrashCase{
            "thread_exception", {"getvolumename", "{}"}, "uncaught exception: thread exploded"}),
    [](const auto& test_info) { return std::string(test_info.param.name); });

TEST(ExecDriver, NoiseFromLibrariesAndChildrenNeverReachesKubelet) {
  // The driver's background `sleep 60` inherits this marker with the rest of
  // the environment, so the test can find it without racing its start.
  flexkit::testing::TempDir dir("exec-driver-noise");
  const std::string marker = "FLEXKIT_EXEC_DRIVER_TEST=" + dir.path();
  ProcessResult r = RunProcess({CrashDriver(), "mountdevice", "/d", "/dev/x", "{}"},
                               WithEnv("FLEXKIT_EXEC_DRIVER_TEST", dir.path()));
  const std::vector<pid_t> children = flexkit::testing::LiveProcessesCarrying(marker);
  for (pid_t child : children) ::kill(child, SIGKILL);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(OneReply(r).at("status"), "Success");
  // The output closed while the background child still ran: it inherited
  // /dev/null, not kubelet's pipe, which closed when the driver exited.
  EXPECT_FALSE(children.empty()) << "the driver's output stayed open until its child ended";
}

TEST(ExecDriver, NoArgumentsIsAFailure) {
  ProcessResult r = RunProcess({TmpfsBinary()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(OneReply(r).at("status"), "Failure");
}

TEST(ExecDriver, InitReplyIsExact) {
  ProcessResult r = RunProcess({TmpfsBinary(), "init"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\"status\":\"Success\",\"capabilities\":{\"attach\":false,\"selinuxRelabel\":true,"
            "\"supportsMetrics\":true,\"fsGroup\":true,\"requiresFSResize\":true}}\n");
  EXPECT_EQ(r.err, "");
}

TEST(ExecDriver, UnknownVerbIsNotSupportedExitZero) {
  ProcessResult r = RunProcess({TmpfsBinary(), "frobnicate", "x"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"status\":\"Not supported\"}\n");
}

TEST(ExecDriver, AttachOfANonAttachableDriverIsNotSupported) {
  ProcessResult r = RunProcess({TmpfsBinary(), "attach", "{}", "node-1"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"status\":\"Not supported\"}\n");
}

TEST(ExecDriver, SecretsNeverAppearInRepliesOrLogs) {
  flexkit::testing::TempDir dir;
  const std::string log = dir.Join("driver.log");
  // An invalid size makes mount fail after the secrets were decoded.
  const std::string json = R"({"kubernetes.io/secret/password":"aHVudGVyMg==","size":"hunter2"})";
  ProcessResult r = RunProcess({TmpfsBinary(), "mount", dir.Join("vol"), json},
                               WithEnv("FLEXKIT_TMPFS_LOG", log));
  EXPECT_EQ(r.exit_code, 1);
  OneReply(r);
  EXPECT_THAT(r.out, Not(HasSubstr("hunter2")));
  EXPECT_THAT(r.out, Not(HasSubstr("aHVudGVyMg")));
  ProcessResult cat = RunProcess({"/bin/cat", log});
  EXPECT_THAT(cat.out, HasSubstr("call: \"mount\""));
  EXPECT_THAT(cat.out, HasSubstr("<redacted>"));
  EXPECT_THAT(cat.out, Not(HasSubstr("hunter2")));
  EXPECT_THAT(cat.out, Not(HasSubstr("aHVudGVyMg")));
}

TEST(ExecDriver, UnwritableLogFileDoesNotBreakTheReply) {
  ProcessResult r =
      RunProcess({TmpfsBinary(), "init"}, WithEnv("FLEXKIT_TMPFS_LOG", "/nonexistent/dir/x.log"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(OneReply(r).at("status"), "Success");
}

TEST(ExecDriver, ClosedStdoutStillExitsWithTheRightCode) {
  ProcessResult r =
      RunProcess({"/bin/sh", "-c", "\"$0\" frobnicate >&-; echo rc=$?", TmpfsBinary()});
  EXPECT_EQ(r.out, "rc=0\n");
}

}  // namespace
