// convoy-flexvolume against convoy-fake, called the way kubelet and the
// attach/detach controller call it: the real binary, one JSON reply judged
// on combined output. Each simulated host is a convoy-fake daemon in its own
// mount namespace; node-side verbs run inside it (nsenter). Needs root (loop
// devices, mkfs, mounts); skipped with the reason otherwise.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/driver/convoy/scripted_server.h"
#include "tests/fakes/fake_process.h"
#include "tests/fakes/raw_http.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using flexkit::fakes::testing::ConvoyFakeBinary;
using flexkit::fakes::testing::FakeProcess;
using flexkit::fakes::testing::HttpConnection;
using flexkit::testing::ProcessResult;
using nlohmann::json;
using ::testing::HasSubstr;

std::vector<std::string> LoopDevicesUnder(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir("/sys/block");
  while (dirent* e = d ? readdir(d) : nullptr) {
    const std::string name = e->d_name;
    if (name.rfind("loop", 0) != 0) continue;
    std::ifstream f("/sys/block/" + name + "/loop/backing_file");
    std::string backing;
    if (std::getline(f, backing) && backing.rfind(dir, 0) == 0) out.push_back("/dev/" + name);
  }
  if (d) closedir(d);
  return out;
}

struct Reply {
  ProcessResult process;
  json doc;
  std::string status() const { return doc.value("status", ""); }
  std::string message() const { return doc.value("message", ""); }
  std::string device() const { return doc.value("device", ""); }
};

class ConvoyDriverIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!flexkit::testing::IsRoot()) GTEST_SKIP() << "needs root: loop devices, mkfs and mounts";
    cloud_ = std::make_unique<FakeProcess>(std::vector<std::string>{
        ConvoyFakeBinary(), "cloud", "--socket", Path("cloud.sock"), "--state-dir", Path("cloud"),
        "--attach-delay", "0", "--consistency-delay", "0"});
  }

  void TearDown() override {
    for (auto& [host, daemon] : daemons_) {
      if (daemon->running()) daemon->Stop();
    }
    if (!cloud_) return;
    json state = Admin("GET", "/admin/state");
    EXPECT_TRUE(state["Violations"].empty()) << "double attachment: " << state["Violations"].dump();
    for (auto& v : state["Volumes"]) {
      if (!v["Attachments"].empty())
        Admin("POST", "/ec2/DetachVolume", {{"VolumeId", v["VolumeId"]}, {"Force", true}});
    }
    EXPECT_EQ(0, cloud_->Stop());
    EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty()) << "a loop device was left behind";
  }

  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  // The lines of `host`'s daemon log for the requests it has answered
  // ("request start_ms=... status=... METHOD PATH"), those naming `what`.
  std::string DaemonRequests(const std::string& host, const std::string& what) const {
    std::istringstream log(flexkit::testing::ReadFileText(Path(host + "/convoy-fake-daemon.log")));
    std::string line, found;
    while (std::getline(log, line)) {
      if (line.find("request start_ms=") != std::string::npos &&
          line.find(what) != std::string::npos) {
        found += line + "\n";
      }
    }
    return found;
  }

  static size_t CountLines(const std::string& text) {
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }

  json Admin(const std::string& method, const std::string& path,
             const json& body = json::object()) {
    HttpConnection c(Path("cloud.sock"));
    auto r = c.Request(method, path, method == "GET" ? std::nullopt : std::optional(body.dump()));
    EXPECT_EQ(200, r.status) << path << ": " << r.body;
    return json::parse(r.body);
  }

  // A host: its instance in the cloud, its daemon in a fresh mount
  // namespace, and the driver's config on it, with its own stateDir as on
  // a real node. VFS volumes live in one directory all hosts share, as on
  // NFS.
  // `api`: which Convoy the daemon plays (convoy-fake --api); the driver's
  // config keeps its default `api: auto`, so it must find out itself.
  void StartHost(const std::string& host, const std::string& mode = "attach",
                 const std::string& api = "extended") {
    if (!instances_.count(host))
      instances_[host] = Admin("POST", "/admin/instances", {{"Host", host}})["InstanceId"];
    daemons_[host] = std::make_unique<FakeProcess>(std::vector<std::string>{"/usr/bin/unshare",
                                                                            "--mount",
                                                                            "--propagation",
                                                                            "private",
                                                                            ConvoyFakeBinary(),
                                                                            "daemon",
                                                                            "--socket",
                                                                            Path(host + ".sock"),
                                                                            "--state-dir",
                                                                            Path(host),
                                                                            "--drivers",
                                                                            "ebs,vfs",
                                                                            "--vfs-path",
                                                                            Path("vfs"),
                                                                            "--cloud",
                                                                            Path("cloud.sock"),
                                                                            "--instance-id",
                                                                            instances_[host],
                                                                            "--host",
                                                                            host,
                                                                            "--api",
                                                                            api});
    std::ofstream(Path(host + ".json")) << json{
        {"socket", Path(host + ".sock")},
        {"socketTemplate", Path("{node}.sock")},
        {"mode", mode},
        {"timeouts", {{"connect", "2s"}, {"request", "20s"}, {"waitforattach", "10s"}}},
        {"logFile", Path("driver.log")},
        {"stateDir",
         Path(host + "-driver-state")}}.dump();
  }

  // The driver as kubelet on `host` runs it: inside the host's mount
  // namespace, with that host's config.
  Reply Driver(const std::string& host, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/nsenter", "--target",
                                     std::to_string(daemons_.at(host)->pid()), "--mount",
                                     flexkit::testing::BuiltBinary("driver/convoy-flexvolume")};
    argv.insert(argv.end(), args.begin(), args.end());
    flexkit::testing::RunOptions options;
    options.extra_env["CONVOY_FLEXVOLUME_CONFIG"] = Path(host + ".json");
    options.deadline = std::chrono::seconds(60);
    Reply r{flexkit::testing::RunProcess(argv, options), {}};
    EXPECT_EQ(r.process.err, "") << "stderr is protocol";
    EXPECT_EQ(r.process.out.find('\n'), r.process.out.size() - 1) << "one line: " << r.process.out;
    r.doc = json::parse(r.process.out, nullptr, false);
    EXPECT_TRUE(r.doc.is_object()) << r.process.out;
    EXPECT_EQ(r.process.exit_code, r.status() == "Failure" ? 1 : 0) << r.process.out;
    return r;
  }

  ProcessResult InHost(const std::string& host, const std::string& command) {
    return flexkit::testing::RunProcess({"/usr/bin/nsenter", "--target",
                                         std::to_string(daemons_.at(host)->pid()), "--mount",
                                         "/bin/sh", "-c", command});
  }

  // kubelet's global mount path of `pv` on `host`; with one_kubelet_dir_,
  // the same path on every host, as on a real cluster (each host's mounts
  // stay in its own namespace).
  std::string Global(const std::string& host, const std::string& pv) {
    const std::string kubelet = one_kubelet_dir_ ? "kubelet" : host + "-kubelet";
    return Path(kubelet + "/plugins/kubernetes.io/flexvolume/rancher.io/convoy/mounts/" + pv);
  }

  // kubelet's prepareForMount: the directory exists (0750) before the call.
  void Prepare(const std::string& host, const std::string& dir) {
    ASSERT_EQ(InHost(host, "mkdir -p -m 0750 '" + dir + "'").exit_code, 0);
  }

  static json Options(const std::string& pv, json extra = json::object()) {
    json o = {{"kubernetes.io/fsType", ""},
              {"kubernetes.io/pvOrVolumeName", pv},
              {"kubernetes.io/readwrite", "rw"}};
    for (auto& [k, v] : extra.items()) o[k] = v;
    return o;
  }

  std::string NewEbsVolume(int gib = 1) {
    return Admin("POST", "/ec2/CreateVolume", {{"Size", gib}, {"VolumeType", "gp2"}})["VolumeId"];
  }

  // Attach -> waitforattach -> mountdevice, checking idempotency on the way.
  std::string BringUp(const std::string& host, const std::string& pv, const json& opts) {
    const std::string o = opts.dump();
    Reply a = Driver(host, {"attach", o, host});
    EXPECT_EQ(a.status(), "Success") << a.message();
    EXPECT_EQ(Driver(host, {"attach", o, host}).device(), a.device()) << "attach is not idempotent";
    Reply w = Driver(host, {"waitforattach", a.device(), o});
    EXPECT_EQ(w.device(), a.device()) << w.message();
    EXPECT_EQ(Driver(host, {"waitforattach", "", o}).device(), a.device()) << "waitforattach \"\"";
    EXPECT_EQ(Driver(host, {"isattached", o, host}).doc.value("attached", false), true);
    Prepare(host, Global(host, pv));
    Reply m = Driver(host, {"mountdevice", Global(host, pv), w.device(), o});
    EXPECT_EQ(m.status(), "Success") << m.message();
    EXPECT_EQ(Driver(host, {"mountdevice", Global(host, pv), w.device(), o}).status(), "Success")
        << "mountdevice is not idempotent";
    return a.device();
  }

  // unmountdevice -> detach, twice each.
  void TearDownVolume(const std::string& host, const std::string& pv, const json& opts) {
    for (int i = 0; i < 2; ++i) {
      Reply u = Driver(host, {"unmountdevice", Global(host, pv)});
      EXPECT_EQ(u.status(), "Success") << u.message();
    }
    EXPECT_NE(InHost(host, "grep -q ' " + Global(host, pv) + " ' /proc/self/mountinfo").exit_code,
              0)
        << "still mounted";
    for (int i = 0; i < 2; ++i) {
      Reply d = Driver(host, {"detach", pv, host});
      EXPECT_EQ(d.status(), "Success") << d.message();
    }
    EXPECT_EQ(Driver(host, {"isattached", opts.dump(), host}).doc.value("attached", true), false);
  }

  void EbsLifecycle(const std::string& fs) {
    StartHost("node-a");
    const json opts = Options("pv-" + fs, {{"size", "512Mi"}, {"kubernetes.io/fsType", fs}});
    const std::string device = BringUp("node-a", "pv-" + fs, opts);
    auto blkid = flexkit::testing::RunProcess({"/sbin/blkid", "-o", "value", "-s", "TYPE", device});
    EXPECT_EQ(blkid.out, fs + "\n");
    const std::string g = Global("node-a", "pv-" + fs);
    EXPECT_EQ(InHost("node-a", "echo data > " + g + "/f && sync && cat " + g + "/f").out, "data\n");
    EXPECT_EQ(Driver("node-a", {"mount", Path("pod"), opts.dump()}).status(), "Not supported");
    TearDownVolume("node-a", "pv-" + fs, opts);
    EXPECT_TRUE(LoopDevicesUnder(dir_.path()).empty());
  }

  flexkit::testing::TempDir dir_{"cfv-int"};
  std::unique_ptr<FakeProcess> cloud_;
  std::map<std::string, std::unique_ptr<FakeProcess>> daemons_;
  std::map<std::string, std::string> instances_;
  bool one_kubelet_dir_ = false;
};

TEST_F(ConvoyDriverIntegration, EbsExt4AttachModeLifecycle) { EbsLifecycle("ext4"); }

TEST_F(ConvoyDriverIntegration, EbsXfsAttachModeLifecycle) { EbsLifecycle("xfs"); }

TEST_F(ConvoyDriverIntegration, VfsAttachModeLifecycle) {
  StartHost("node-a");
  const json opts = Options("pv-vfs", {{"convoyDriver", "vfs"}});
  BringUp("node-a", "pv-vfs", opts);
  const std::string g = Global("node-a", "pv-vfs");
  EXPECT_EQ(InHost("node-a", "echo data > " + g + "/f && cat " + g + "/f").out, "data\n");
  TearDownVolume("node-a", "pv-vfs", opts);
  std::ifstream log(Path("driver.log"));
  EXPECT_THAT(std::string(std::istreambuf_iterator<char>(log), {}),
              HasSubstr("is Convoy with the Kubernetes extensions"))
      << "api auto must find the extensions";
  std::ifstream kept(Path("vfs/pv-vfs/f"));
  std::string content;
  std::getline(kept, content);
  EXPECT_EQ(content, "data") << "detach (ReferenceOnly) must keep the data";
}

TEST_F(ConvoyDriverIntegration, MountOnlyModeLifecycle) {
  StartHost("node-a", "mount");
  EXPECT_THAT(Driver("node-a", {"init"}).process.out, HasSubstr("\"attach\":false"));
  const json opts = Options("pv-m", {{"size", "512Mi"}});
  const std::string pod = Path("node-a-kubelet/pods/uid-1/volumes/rancher.io~convoy/pv-m");
  Prepare("node-a", pod);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(Driver("node-a", {"mount", pod, opts.dump()}).status(), "Success");
  EXPECT_EQ(InHost("node-a", "echo data > " + pod + "/f && cat " + pod + "/f").out, "data\n");
  EXPECT_EQ(Admin("GET", "/admin/state")["Volumes"][0]["Attachments"].size(), 1u);
  for (int i = 0; i < 2; ++i) {
    Reply u = Driver("node-a", {"unmount", pod});
    EXPECT_EQ(u.status(), "Success") << u.message();
  }
  EXPECT_EQ(InHost("node-a", "ls -A " + pod).out, "") << "unmount must leave the dir empty";
  EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"][0]["Attachments"].empty())
      << "unmount must detach";
  EXPECT_EQ(Driver("node-a", {"unmount", Path("never-existed")}).status(), "Success");
}

TEST_F(ConvoyDriverIntegration, ReadOnlyIsEnforced) {
  StartHost("node-a");
  const json rw = Options("pv-ro", {{"size", "512Mi"}});
  BringUp("node-a", "pv-ro", rw);
  EXPECT_EQ(InHost("node-a", "echo before > " + Global("node-a", "pv-ro") + "/f").exit_code, 0);
  EXPECT_EQ(Driver("node-a", {"unmountdevice", Global("node-a", "pv-ro")}).status(), "Success");
  json ro = rw;
  ro["kubernetes.io/readwrite"] = "ro";
  Reply m = Driver("node-a", {"mountdevice", Global("node-a", "pv-ro"), "", ro.dump()});
  ASSERT_EQ(m.status(), "Success") << m.message();
  auto write = InHost("node-a", "echo after > " + Global("node-a", "pv-ro") + "/f");
  EXPECT_NE(write.exit_code, 0) << "a write to a read-only volume succeeded";
  EXPECT_EQ(InHost("node-a", "cat " + Global("node-a", "pv-ro") + "/f").out, "before\n");
  TearDownVolume("node-a", "pv-ro", ro);
}

TEST_F(ConvoyDriverIntegration, XfsRequestOnExt4VolumeFailsAndKeepsTheData) {
  StartHost("node-a");
  const std::string id = NewEbsVolume();
  const json ext4 = Options("pv-fs", {{"volumeID", id}, {"kubernetes.io/fsType", "ext4"}});
  json xfs = ext4;
  xfs["kubernetes.io/fsType"] = "xfs";
  const std::string device = BringUp("node-a", "pv-fs", ext4);
  EXPECT_EQ(InHost("node-a", "echo keep > " + Global("node-a", "pv-fs") + "/f && sync").exit_code,
            0);
  EXPECT_EQ(Driver("node-a", {"unmountdevice", Global("node-a", "pv-fs")}).status(), "Success");

  // Mounting the attached ext4 volume as xfs is refused.
  Reply m = Driver("node-a", {"mountdevice", Global("node-a", "pv-fs"), device, xfs.dump()});
  EXPECT_EQ(m.status(), "Failure");
  EXPECT_THAT(m.message(), HasSubstr("ext4"));

  // So is adopting it as xfs after a detach.
  EXPECT_EQ(Driver("node-a", {"detach", "pv-fs", "node-a"}).status(), "Success");
  Reply a = Driver("node-a", {"attach", xfs.dump(), "node-a"});
  EXPECT_EQ(a.status(), "Failure");
  EXPECT_THAT(a.message(), HasSubstr("ext4"));

  // Nothing was reformatted: as ext4 the data is still there.
  const std::string again = BringUp("node-a", "pv-fs", ext4);
  auto blkid = flexkit::testing::RunProcess({"/sbin/blkid", "-o", "value", "-s", "TYPE", again});
  EXPECT_EQ(blkid.out, "ext4\n");
  EXPECT_EQ(InHost("node-a", "cat " + Global("node-a", "pv-fs") + "/f").out, "keep\n");
  TearDownVolume("node-a", "pv-fs", ext4);
}

TEST_F(ConvoyDriverIntegration, FailoverFromAStoppedInstanceKeepsTheData) {
  StartHost("node-a");
  StartHost("node-b");
  const std::string id = NewEbsVolume();
  const json opts = Options("pv-f", {{"volumeID", id}, {"kubernetes.io/fsType", "ext4"}});
  BringUp("node-a", "pv-f", opts);
  const std::string ga = Global("node-a", "pv-f");
  ASSERT_EQ(InHost("node-a", "head -c 1048576 /dev/urandom > " + ga + "/blob && sync").exit_code,
            0);
  const std::string sum = InHost("node-a", "sha256sum < " + ga + "/blob").out;

  // While node-a runs, node-b may not take the volume.
  Reply refused = Driver("node-b", {"attach", opts.dump(), "node-b"});
  EXPECT_EQ(refused.status(), "Failure");
  EXPECT_THAT(refused.message(),
              HasSubstr("attach pv-f on node-b: convoy at " + Path("node-b.sock")));
  EXPECT_THAT(refused.message(), HasSubstr("running"));

  // node-a crashes: its daemon dies with its mounts, its instance stops.
  daemons_["node-a"]->Kill();
  Admin("POST", "/admin/instances/" + instances_["node-a"] + "/stop");
  Reply isattached_a = Driver("node-b", {"isattached", opts.dump(), "node-a"});
  EXPECT_EQ(isattached_a.status(), "Failure") << "an unreachable daemon is not \"not attached\"";

  const std::string device_b = BringUp("node-b", "pv-f", opts);
  EXPECT_EQ(InHost("node-b", "sha256sum < " + Global("node-b", "pv-f") + "/blob").out, sum);

  // node-a comes back; a late detach for node-a leaves node-b alone.
  Admin("POST", "/admin/instances/" + instances_["node-a"] + "/start");
  StartHost("node-a");
  EXPECT_EQ(Driver("node-a", {"isattached", opts.dump(), "node-a"}).doc.value("attached", true),
            false);
  EXPECT_EQ(Driver("node-a", {"unmountdevice", ga}).status(), "Success");
  EXPECT_EQ(Driver("node-a", {"detach", "pv-f", "node-a"}).status(), "Success");
  EXPECT_EQ(Driver("node-b", {"isattached", opts.dump(), "node-b"}).doc.value("attached", false),
            true);
  EXPECT_EQ(InHost("node-b", "sha256sum < " + Global("node-b", "pv-f") + "/blob").out, sum);
  EXPECT_EQ(InHost("node-b", "echo more > " + Global("node-b", "pv-f") + "/g").exit_code, 0);
  TearDownVolume("node-b", "pv-f", opts);
  (void)device_b;
}

TEST_F(ConvoyDriverIntegration, DaemonDownIsAFailureWithinTheTimeout) {
  StartHost("node-a");
  StartHost("node-b");
  daemons_["node-b"]->Stop();
  Reply r = Driver("node-a", {"isattached", Options("pv-x").dump(), "node-b"});
  EXPECT_FALSE(r.process.timed_out);
  EXPECT_EQ(r.status(), "Failure");
  EXPECT_THAT(r.message(), HasSubstr("convoy at " + Path("node-b.sock")));
  // Refused at once (the stopped daemon's socket is gone), not given up on
  // after the 2 s connect timeout ("no connection within 2000 ms").
  EXPECT_THAT(r.message(), HasSubstr("cannot connect: No such file or directory"));
}

TEST_F(ConvoyDriverIntegration, SlowDaemonIsAFailureWithinTheTimeout) {
  StartHost("node-a");
  std::ofstream(Path("node-a.json")) << json{
      {"socket", Path("node-a.sock")},
      {"timeouts", {{"request", "1s"}}},
      {"stateDir",
       Path("node-a-driver-state")}}.dump();
  Admin("POST", "/admin/faults", {{"Operation", "CreateVolume"}, {"LatencyMs", 4000}});
  Reply r = Driver("node-a", {"attach", Options("pv-slow", {{"size", "512Mi"}}).dump(), "node-a"});
  // The daemon logs a request once it has answered it: when the driver
  // returned, the daemon was still working on the create (the cloud still
  // sleeping before it makes the volume), so the driver's own 1 s deadline,
  // not the daemon's answer, ended the call.
  const std::string creates_at_return = DaemonRequests("node-a", "POST /v1/volumes/create");
  EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"].empty())
      << "the driver waited for the slow daemon";
  EXPECT_EQ(r.status(), "Failure");
  EXPECT_THAT(r.message(), HasSubstr("no complete reply within 1000 ms"));
  EXPECT_EQ(creates_at_return, "") << "the driver waited for the slow daemon";
  // A stopping daemon finishes, and logs, every request it took: the create
  // that timed out was sent once, never retried.
  daemons_["node-a"]->Stop();
  EXPECT_EQ(CountLines(DaemonRequests("node-a", "POST /v1/volumes/create")), 1u)
      << DaemonRequests("node-a", "");
  Admin("DELETE", "/admin/faults");
}

TEST_F(ConvoyDriverIntegration, GarbageFromTheDaemonIsAFailure) {
  StartHost("node-a");
  testing::ScriptedServer garbage(Path("node-g.sock"),
                                  {{"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{{{{"}});
  Reply r = Driver("node-a", {"isattached", Options("pv-x").dump(), "node-g"});
  EXPECT_EQ(r.status(), "Failure");
  EXPECT_THAT(r.message(), HasSubstr("unexpected reply"));
}

TEST_F(ConvoyDriverIntegration, HostileNamesAreRejectedAndTouchNothing) {
  StartHost("node-a");
  for (const std::string name : {"..", "../etc", "a/b", "a b", "\xc3\xbcn\xc3\xaf", "/abs", "-x"}) {
    Reply r = Driver("node-a", {"attach", Options(name).dump(), "node-a"});
    EXPECT_EQ(r.status(), "Failure") << name;
    EXPECT_THAT(r.message(), HasSubstr("is not a valid Convoy name")) << name;
  }
  EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"].empty());
}

TEST_F(ConvoyDriverIntegration, LargestPossibleOptionValueIsHandled) {
  // Linux caps one argv element at 128 KiB (MAX_ARG_STRLEN), so no kubelet
  // can pass a 1 MiB option value to any driver; the largest that fits is
  // handled: ignored when unknown, refused briefly when it is the name.
  StartHost("node-a");
  const std::string big(120 * 1024, 'x');
  Reply ignored =
      Driver("node-a", {"isattached", Options("pv-big", {{"description", big}}).dump(), "node-a"});
  EXPECT_EQ(ignored.status(), "Success") << ignored.message();
  Reply refused = Driver("node-a", {"attach", Options("pv-big", {{"name", big}}).dump(), "node-a"});
  EXPECT_EQ(refused.status(), "Failure");
  EXPECT_LT(refused.process.out.size(), 512u);
}

// --- Against stock Convoy v0.5.2 (convoy-fake --api stock) ---

TEST_F(ConvoyDriverIntegration, StockVfsAttachModeLifecycle) {
  StartHost("node-a", "attach", "stock");
  const json opts = Options("pv-vfs", {{"convoyDriver", "vfs"}});
  BringUp("node-a", "pv-vfs", opts);
  const std::string g = Global("node-a", "pv-vfs");
  // The driver bound the volume's own directory there.
  EXPECT_EQ(InHost("node-a", "echo data > " + g + "/f && cat " + g + "/f").out, "data\n");
  EXPECT_EQ(flexkit::testing::ReadFileText(Path("vfs/pv-vfs/f")), "data\n");
  EXPECT_THAT(flexkit::testing::ReadFileText(Path("driver.log")),
              HasSubstr("is stock Convoy v0.5.2"));
  TearDownVolume("node-a", "pv-vfs", opts);
  EXPECT_EQ(flexkit::testing::ReadFileText(Path("vfs/pv-vfs/f")), "data\n")
      << "detach (ReferenceOnly) must keep the data";
}

TEST_F(ConvoyDriverIntegration, StockVfsReadOnlyIsEnforced) {
  StartHost("node-a", "attach", "stock");
  const json ro = Options("pv-vro", {{"convoyDriver", "vfs"}, {"kubernetes.io/readwrite", "ro"}});
  BringUp("node-a", "pv-vro", ro);
  EXPECT_NE(InHost("node-a", "echo x > " + Global("node-a", "pv-vro") + "/f").exit_code, 0)
      << "a write to a read-only volume succeeded";
  TearDownVolume("node-a", "pv-vro", ro);
}

TEST_F(ConvoyDriverIntegration, StockEbsAttachModeLifecycleWithReadOnlyEnforced) {
  StartHost("node-a", "attach", "stock");
  const json rw = Options("pv-se", {{"size", "512Mi"}, {"kubernetes.io/fsType", "ext4"}});
  const std::string device = BringUp("node-a", "pv-se", rw);
  auto blkid = flexkit::testing::RunProcess({"/sbin/blkid", "-o", "value", "-s", "TYPE", device});
  EXPECT_EQ(blkid.out, "ext4\n");
  const std::string g = Global("node-a", "pv-se");
  EXPECT_EQ(InHost("node-a", "echo before > " + g + "/f && sync").exit_code, 0);
  EXPECT_EQ(Driver("node-a", {"unmountdevice", g}).status(), "Success");
  json ro = rw;
  ro["kubernetes.io/readwrite"] = "ro";
  Reply m = Driver("node-a", {"mountdevice", g, device, ro.dump()});
  ASSERT_EQ(m.status(), "Success") << m.message();
  EXPECT_NE(InHost("node-a", "echo after > " + g + "/f").exit_code, 0)
      << "stock Convoy ignores ReadWrite: the driver must make it read-only";
  EXPECT_EQ(InHost("node-a", "cat " + g + "/f").out, "before\n");
  TearDownVolume("node-a", "pv-se", ro);
}

TEST_F(ConvoyDriverIntegration, StockMountOnlyModeLifecycle) {
  StartHost("node-a", "mount", "stock");
  for (const json& opts :
       {Options("pv-m", {{"size", "512Mi"}}), Options("pv-mv", {{"convoyDriver", "vfs"}})}) {
    const std::string pv = opts["kubernetes.io/pvOrVolumeName"];
    SCOPED_TRACE(pv);
    const std::string pod = Path("node-a-kubelet/pods/uid-1/volumes/rancher.io~convoy/" + pv);
    Prepare("node-a", pod);
    for (int i = 0; i < 2; ++i) {
      Reply m = Driver("node-a", {"mount", pod, opts.dump()});
      EXPECT_EQ(m.status(), "Success") << m.message();
    }
    EXPECT_EQ(InHost("node-a", "echo data > " + pod + "/f && cat " + pod + "/f").out, "data\n");
    for (int i = 0; i < 2; ++i) {
      Reply u = Driver("node-a", {"unmount", pod});
      EXPECT_EQ(u.status(), "Success") << u.message();
    }
    EXPECT_EQ(InHost("node-a", "ls -A " + pod).out, "") << "unmount must leave the dir empty";
  }
  EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"][0]["Attachments"].empty())
      << "unmount must detach";
}

TEST_F(ConvoyDriverIntegration, StockXfsRequestIsAFailureAndCreatesNothing) {
  StartHost("node-a", "attach", "stock");
  Reply a = Driver("node-a",
                   {"attach", Options("pv-x", {{"kubernetes.io/fsType", "xfs"}}).dump(), "node-a"});
  EXPECT_EQ(a.status(), "Failure");
  EXPECT_THAT(a.message(), HasSubstr("formats EBS volumes as ext4 only"));
  EXPECT_TRUE(Admin("GET", "/admin/state")["Volumes"].empty());
}

TEST_F(ConvoyDriverIntegration, StockTakeOverIsAFailureNotAHang) {
  StartHost("node-a", "attach", "stock");
  StartHost("node-b", "attach", "stock");
  const std::string id = NewEbsVolume();
  const json opts = Options("pv-t", {{"volumeID", id}});
  Reply first = Driver("node-a", {"attach", opts.dump(), "node-a"});
  ASSERT_EQ(first.status(), "Success") << first.message();
  daemons_["node-a"]->Kill();
  Admin("POST", "/admin/instances/" + instances_["node-a"] + "/stop");
  Reply refused = Driver("node-b", {"attach", opts.dump(), "node-b"});
  // Not a hang: the daemon refused the one create at once (the cloud's
  // VolumeInUse), and the driver passed that on rather than waiting or
  // trying again. RunProcess's deadline is only the hang guard.
  EXPECT_FALSE(refused.process.timed_out);
  const std::string creates = DaemonRequests("node-b", "POST /v1/volumes/create");
  EXPECT_EQ(CountLines(creates), 1u) << DaemonRequests("node-b", "");
  EXPECT_THAT(creates, HasSubstr("status=400 "));
  EXPECT_THAT(refused.message(), HasSubstr("VolumeInUse"));
  EXPECT_EQ(refused.status(), "Failure");
  EXPECT_THAT(refused.message(), HasSubstr("cannot take over an EBS volume attached to another"));
  EXPECT_THAT(refused.message(), HasSubstr("api: extended"));
  EXPECT_EQ(Admin("GET", "/admin/state")["Volumes"][0]["Attachments"][0]["InstanceId"],
            instances_["node-a"])
      << "nothing was taken away from node-a";
}

// Two nodes on one shared vfs path with stock daemons, whose record of the
// volume (its MountPoint too) is one file both daemons read. Node-a's
// teardown, with node-b attached and later mounted, releases nothing of
// node-b's; the data node-a wrote and synced is there on node-b; the
// reference and the data outlive both teardowns.
TEST_F(ConvoyDriverIntegration, StockVfsOnTwoNodesOneNodesTeardownLeavesTheOthers) {
  one_kubelet_dir_ = true;
  StartHost("node-a", "attach", "stock");
  StartHost("node-b", "attach", "stock");
  const json opts = Options("pv-rwx", {{"convoyDriver", "vfs"}});
  const std::string g = Global("node-a", "pv-rwx");
  const auto mounted_in = [&](const std::string& host) {
    return InHost(host, "grep -q ' " + g + " ' /proc/self/mountinfo").exit_code == 0;
  };
  const auto attached_to = [&](const std::string& host) {
    Reply r = Driver(host, {"isattached", opts.dump(), host});
    EXPECT_EQ(r.status(), "Success") << r.message();
    return r.doc.value("attached", false);
  };
  const std::string device = BringUp("node-a", "pv-rwx", opts);
  ASSERT_EQ(InHost("node-a", "echo from-a > " + g + "/f && sync " + g + "/f").exit_code, 0);
  EXPECT_FALSE(attached_to("node-b")) << "its daemon sees the volume; it was never attached there";

  // The pod moves: node-b attaches while node-a still has it, then node-a
  // tears down (the old owner's detach must not take node-b's attachment).
  Reply b = Driver("node-b", {"attach", opts.dump(), "node-b"});
  ASSERT_EQ(b.status(), "Success") << b.message();
  EXPECT_EQ(b.device(), device);
  EXPECT_TRUE(attached_to("node-a"));
  TearDownVolume("node-a", "pv-rwx", opts);
  EXPECT_TRUE(attached_to("node-b"));
  Prepare("node-b", g);
  Reply m = Driver("node-b", {"mountdevice", g, b.device(), opts.dump()});
  ASSERT_EQ(m.status(), "Success") << m.message();
  EXPECT_EQ(InHost("node-b", "cat " + g + "/f").out, "from-a\n");

  // node-a comes back and takes the volume again while node-b has it
  // mounted (RWX), then tears down: node-b keeps its mount and attachment.
  BringUp("node-a", "pv-rwx", opts);
  EXPECT_EQ(InHost("node-a", "cat " + g + "/f").out, "from-a\n");
  TearDownVolume("node-a", "pv-rwx", opts);
  EXPECT_TRUE(mounted_in("node-b")) << "node-a's teardown unmounted node-b's mount";
  EXPECT_TRUE(attached_to("node-b"));
  EXPECT_EQ(InHost("node-b", "echo from-b >> " + g + "/f").exit_code, 0);

  TearDownVolume("node-b", "pv-rwx", opts);
  EXPECT_EQ(flexkit::testing::ReadFileText(Path("vfs/pv-rwx/f")), "from-a\nfrom-b\n");
}

}  // namespace
}  // namespace convoy_flexvolume
