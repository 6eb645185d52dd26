// What a driver hands its mount helpers: option strings split as libmount
// splits them, a value's commas told apart from the options around it, and
// (as root) a recorder that sees mount(8)'s argv and environment in a
// node's namespace and leaves nothing mounted there.
#include "conformance/helper_calls.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "simulator/boost_process_runner.h"
#include "simulator/node.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

using Parts = std::vector<std::string>;

TEST(HelperCalls, OptionStringsInEverySpelling) {
  HelperCall call{{"mount", "-t", "cifs", "-o", "a=1,b", "-oc", "--options", "d", "--options=e,f",
                   "//srv/share", "/mnt"},
                  ""};
  EXPECT_EQ(MountOptionStrings(call), (Parts{"a=1,b", "c", "d", "e,f"}));
}

TEST(HelperCalls, SplitsAtCommasOutsideQuotesAndNotAtADoubledOne) {
  EXPECT_EQ(SplitMountOptions("rw,size=1m"), (Parts{"rw", "size=1m"}));
  EXPECT_EQ(SplitMountOptions("password=\"a,b\",ro"), (Parts{"password=\"a,b\"", "ro"}));
  EXPECT_EQ(SplitMountOptions("password=a,,b,ro"), (Parts{"password=a,,b", "ro"}));
  EXPECT_EQ(SplitMountOptions(""), (Parts{""}));
}

TEST(HelperCalls, AValueSplitIntoOptionsIsToldFromOneKeptWhole) {
  const std::string value = "-o remount,rw,exec=x";
  auto mount = [](const std::string& options) {
    return std::vector<HelperCall>{{{"mount", "-t", "cifs", "-o", options, "//s/x", "/m"}, ""}};
  };
  EXPECT_NE(ValueAsOptions(mount("username=-o remount,rw,exec=x,ro"), value)
                .find("reached mount split at its commas into mount options of their own"),
            std::string::npos);
  // Quoted, or with its commas doubled (cifs's escape): one option.
  EXPECT_EQ(ValueAsOptions(mount("username=\"-o remount,rw,exec=x\",ro"), value), "");
  EXPECT_EQ(ValueAsOptions(mount("username=-o remount,,rw,,exec=x,ro"), value), "");
  // rw that is the driver's own, not the value's.
  EXPECT_EQ(ValueAsOptions(mount("rw,username=u"), value), "");
  EXPECT_EQ(ValueAsOptions(mount("username=u"), "no comma"), "");
  // The value as an argument of its own (a path) is data, unless its
  // leading '-' makes it an option; after "--", or as -o's argument, it is
  // data again.
  EXPECT_EQ(ValueAsOptions({{{"mount.cifs", "//s/a,b", "/m"}, ""}}, "//s/a,b"), "");
  EXPECT_NE(ValueAsOptions({{{"mount", "-t", "cifs", value, "/m"}, ""}}, value).find("leading '-'"),
            std::string::npos);
  EXPECT_EQ(ValueAsOptions({{{"mount", "-t", "cifs", "--", value, "/m"}, ""}}, value), "");
  EXPECT_EQ(ValueAsOptions({{{"mount", "-o", value, "//s/x", "/m"}, ""}}, "-o x"), "");
}

// mount(8) run in the node's namespace, as a driver runs it, is recorded
// with its argv and environment; the host's mount(8) is untouched, and the
// recorder's binds go with it.
TEST(HelperCalls, RecordsMountInTheNodeAndLeavesNothingMounted) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir run("helper-calls");
  sim::Node node("n1", run.path());
  const auto mounts_before = node.Mounts()->size();
  {
    HelperRecorder helpers(node, run.path(), {"/usr/bin", "/bin", "/usr/sbin", "/sbin"});
    ASSERT_EQ(helpers.skipped(), "");
    sim::ProcessSpec spec;
    spec.executable = "/bin/sh";
    spec.args = {"-c", "PASSWD=s3cret mount -o remount,ro /nonexistent-flexkit 2>/dev/null; :"};
    spec.namespace_fd = node.namespace_fd();
    ASSERT_TRUE(sim::BoostProcessRunner().Run(spec).exit.ok());
    const auto calls = helpers.Calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(std::filesystem::path(calls[0].argv.front()).filename(), "mount");
    EXPECT_EQ(MountOptionStrings(calls[0]), (Parts{"remount,ro"}));
    EXPECT_NE(calls[0].environment.find("PASSWD='s3cret'"), std::string::npos)
        << calls[0].environment;
    // The host's mount(8) is its own.
    EXPECT_EQ(flexkit::testing::ReadFileText("/usr/bin/mount").rfind("#!/bin/sh", 0),
              std::string::npos);
    helpers.Clear();
    EXPECT_TRUE(helpers.Calls().empty());
  }
  EXPECT_EQ(node.Mounts()->size(), mounts_before);
  EXPECT_FALSE(std::filesystem::exists(run.Join("helper-calls/n1")));  // nor the records
}

// A helper that is a symlink to a program reading the name it was called
// by (a stub serving mount.cifs and mount.nfs, ntfs-3g) still gets that
// name through the recorder.
TEST(HelperCalls, AHelperKeepsTheNameItWasCalledBy) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir run("helper-calls");
  const std::string bin = run.Join("sbin");
  std::filesystem::create_directories(bin);
  { std::ofstream(bin + "/multi-helper") << "#!/bin/sh\necho \"called as ${0##*/}\"\n"; }
  std::filesystem::permissions(bin + "/multi-helper", std::filesystem::perms::owner_all);
  std::filesystem::create_symlink("multi-helper", bin + "/mount.flexkita");
  std::filesystem::create_symlink("multi-helper", bin + "/mount.flexkitb");
  sim::Node node("n1", run.path());
  HelperRecorder helpers(node, run.path(), {bin});
  ASSERT_EQ(helpers.skipped(), "");
  sim::ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.args = {"-c", bin + "/mount.flexkita x; " + bin + "/mount.flexkitb y"};
  spec.namespace_fd = node.namespace_fd();
  const auto r = sim::BoostProcessRunner().Run(spec);
  EXPECT_EQ(r.combined, "called as mount.flexkita\ncalled as mount.flexkitb\n");
  EXPECT_EQ(helpers.Calls().size(), 2u);
}

}  // namespace
}  // namespace flexkit::conform
