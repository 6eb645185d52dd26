// RunCommand, the fakes' mkfs and tar: PATH lookup as execvp does, both
// output streams kept in order, the exit code, and a clear text when the
// program cannot run.
#include "platform/run_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace flexkit::platform {
namespace {

TEST(RunCommand, FindsTheProgramInPathAndKeepsBothStreams) {
  const CommandResult r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 4"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_EQ(RunCommand({"/bin/echo", "a b"}).output, "a b\n");
}

TEST(RunCommand, APathEntryIsSearchedInOrder) {
  flexkit::testing::TempDir dir{"run-command"};
  const std::string tool = dir.path() + "/flexkit-probe-tool";
  std::ofstream(tool) << "#!/bin/sh\necho found $1\n";
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  const std::string old_path = ::getenv("PATH") != nullptr ? ::getenv("PATH") : "";
  ::setenv("PATH", ("/nonexistent:" + dir.path() + ":/bin").c_str(), 1);
  EXPECT_EQ(FindInPath("flexkit-probe-tool"), tool);
  const CommandResult r = RunCommand({"flexkit-probe-tool", "x"});
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "found x\n");
}

TEST(RunCommand, AProgramThatCannotRunSaysWhy) {
  const CommandResult missing = RunCommand({"flexkit-no-such-program"});
  EXPECT_EQ(missing.exit_code, -1);
  EXPECT_EQ(missing.output, "run flexkit-no-such-program: not found in PATH");
  EXPECT_EQ(RunCommand({"sh", "-c", "kill -9 $$"}).exit_code, -1);
  try {
    RunCommandOrThrow({"sh", "-c", "echo bad; exit 2"});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "sh -c echo bad; exit 2: exit 2: bad\n");
  }
}

}  // namespace
}  // namespace flexkit::platform
