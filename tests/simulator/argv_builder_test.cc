// Golden argv and options per verb and version profile: the shapes pinned by
// Kubernetes' own unit tests (reference §10) and the examples of §4.
#include "simulator/argv_builder.h"

#include <gtest/gtest.h>

#include "simulator/options_builder.h"
#include "tests/simulator/test_volumes.h"

namespace flexkit::sim {
namespace {

using ::flexkit::sim::testing::Pv1;

MountExtras PodP() {
  MountExtras e;
  e.pod_name = "p";
  e.pod_namespace = "ns";
  e.pod_uid = "<uid>";
  e.fs_group = 2000;
  e.secret = {{"password", "secret"}};
  return e;
}

const char* kAttachJson =
    R"({"kubernetes.io/fsType":"ext4","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw","server":"x"})";

TEST(SimulatorArgvCurrent, ReferenceExampleAttach) {
  const auto& p = FindProfile("current");
  std::string json = OptionsJson(p, Pv1(), nullptr);
  EXPECT_EQ(json, kAttachJson);
  EXPECT_EQ(ArgvBuilder(p).Attach(json, "node-1"), (Args{"attach", kAttachJson, "node-1"}));
}

TEST(SimulatorArgvCurrent, ReferenceExampleMount) {
  const auto& p = FindProfile("current");
  MountExtras extras = PodP();
  std::string json = OptionsJson(p, Pv1(), &extras);
  EXPECT_EQ(
      json,
      R"({"kubernetes.io/fsType":"ext4","kubernetes.io/mounterArgs.FsGroup":"2000","kubernetes.io/pod.name":"p","kubernetes.io/pod.namespace":"ns","kubernetes.io/pod.uid":"\u003cuid\u003e","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw","kubernetes.io/secret/password":"c2VjcmV0","kubernetes.io/serviceAccount.name":"default","server":"x"})");
  std::string dir = "/var/lib/kubelet/pods/u/volumes/foo~cifs/pv-1";
  EXPECT_EQ(ArgvBuilder(p).Mount(dir, json), (Args{"mount", dir, json}));
}

// The argv the Kubernetes flexvolume unit tests assert, verb by verb.
TEST(SimulatorArgvCurrent, UnitTestShapes) {
  ArgvBuilder b(FindProfile("current"));
  const std::string j = "{}";
  EXPECT_EQ(b.Init(), (Args{"init"}));
  EXPECT_EQ(b.GetVolumeName(j), (Args{"getvolumename", j}));
  EXPECT_EQ(b.Attach(j, "localhost"), (Args{"attach", j, "localhost"}));
  EXPECT_EQ(b.WaitForAttach("/dev/sdx", j), (Args{"waitforattach", "/dev/sdx", j}));
  EXPECT_EQ(b.WaitForAttach("", j), (Args{"waitforattach", "", j}));
  EXPECT_EQ(b.MountDevice("/r/mount-dir", "/dev/sdx", j),
            (Args{"mountdevice", "/r/mount-dir", "/dev/sdx", j}));
  EXPECT_EQ(b.IsAttached(j, "localhost"), (Args{"isattached", j, "localhost"}));
  EXPECT_EQ(b.Detach("sdx", "localhost"), (Args{"detach", "sdx", "localhost"}));
  EXPECT_EQ(b.UnmountDevice("/r/mount-dir"), (Args{"unmountdevice", "/r/mount-dir"}));
  EXPECT_EQ(b.Mount("/r/pod", j), (Args{"mount", "/r/pod", j}));
  EXPECT_EQ(b.Unmount("/r/pod"), (Args{"unmount", "/r/pod"}));
  EXPECT_EQ(b.ExpandVolume(j, "/g", "200", "100"), (Args{"expandvolume", j, "/g", "200", "100"}));
  EXPECT_EQ(b.ExpandFs(j, "/dev/sdx", "/p", "200", "100"),
            (Args{"expandfs", j, "/dev/sdx", "/p", "200", "100"}));
}

TEST(SimulatorArgvProfiles, IsAttachedHasTheJsonFirst) {
  EXPECT_EQ(ArgvBuilder(FindProfile("1.7")).IsAttached("{}", "n"), (Args{"isattached", "{}", "n"}));
}

TEST(SimulatorArgv17, PodInfoAndOldFsGroupKey) {
  MountExtras extras = PodP();
  extras.secret.clear();
  EXPECT_EQ(
      OptionsJson(FindProfile("1.7"), Pv1(), &extras),
      R"({"kubernetes.io/fsGroup":"2000","kubernetes.io/fsType":"ext4","kubernetes.io/pod.name":"p","kubernetes.io/pod.namespace":"ns","kubernetes.io/pod.uid":"\u003cuid\u003e","kubernetes.io/pvOrVolumeName":"pv-1","kubernetes.io/readwrite":"rw","kubernetes.io/serviceAccount.name":"default","server":"x"})");
}

TEST(SimulatorArgv115, RenamedFsGroupKey) {
  MountExtras extras = PodP();
  extras.secret.clear();
  auto options = BuildOptions(FindProfile("1.15"), Pv1(), &extras);
  EXPECT_EQ(options.count("kubernetes.io/fsGroup"), 0u);
  EXPECT_EQ(options.at("kubernetes.io/mounterArgs.FsGroup"), "2000");
}

TEST(SimulatorArgvProfiles, MountIgnoresTheOldDeviceArgument) {
  EXPECT_EQ(ArgvBuilder(FindProfile("1.7")).Mount("/dir", "{}", "/dev/sdb"),
            (Args{"mount", "/dir", "{}"}));
}

TEST(SimulatorArgvProfiles, OlderReleasesAreNotProfiles) {
  EXPECT_THROW(FindProfile("1.6"), std::invalid_argument);
  EXPECT_THROW(FindProfile("legacy-1.5"), std::invalid_argument);
}

TEST(SimulatorArgvProfiles, ExpandVerbsOnlySince113) {
  EXPECT_THROW(ArgvBuilder(FindProfile("1.7")).ExpandFs("{}", "d", "p", "2", "1"),
               std::invalid_argument);
  EXPECT_NO_THROW(ArgvBuilder(FindProfile("1.15")).ExpandFs("{}", "d", "p", "2", "1"));
}

TEST(SimulatorArgvProfiles, UnknownProfileNamesTheKnownOnes) {
  try {
    FindProfile("1.99");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(known: 1.7, 1.15, current)"), std::string::npos);
  }
}

}  // namespace
}  // namespace flexkit::sim
