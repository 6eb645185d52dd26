#pragma once
// Stateful fakes of the Convoy daemons the driver talks to, in process, so a
// test checks what the driver did (its reply, the volumes, the mounts, its
// stateDir) rather than which requests it made. Each node's daemon (stock
// v0.5.2, or with the Kubernetes extensions of PR #161) keeps its own EBS
// records and mounts into its host's mount table; what the nodes share, the
// vfs path (where Convoy's vfs driver keeps every volume's record) and the
// EBS cloud, is shared here too. Answers, error texts and statuses are the
// real daemon's (tests/data/fakes/convoy-v0.5.2, reference convoy-api.md),
// and a refused request throws the ConvoyError ConvoyHttpClient would,
// message included.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "driver/convoy/config.h"
#include "driver/convoy/convoy_client.h"
#include "driver/sdk/mounter.h"

namespace convoy_flexvolume {

// Convoy's vfs records live on the shared vfs path (<vfs.path>/config), so
// every node's daemon reads and writes the same record of a volume.
struct SharedVfsPath {
  struct Record {
    std::string path;         // the volume's directory, /vfs/<name>
    std::string mount_point;  // "", its path (a v0.5.2 mount) or a caller's (BindMount)
  };
  std::map<std::string, Record> records;  // by volume name
};

// The EBS volumes of the nodes' region, and which instance has each.
struct EbsCloud {
  struct Volume {
    int64_t size = 0;  // bytes
    std::string type = "gp2";
    int64_t iops = 0;
    std::string filesystem;  // "" while blank
    std::string instance;    // attached to; "" when available
    std::string device;      // where its instance sees it, while attached
  };
  std::map<std::string, Volume> volumes;    // by volume id
  std::set<std::string> stopped_instances;  // every other instance runs
};

// One node's Convoy daemon with the ebs and vfs drivers.
class FakeConvoyDaemon final : public ConvoyClient {
 public:
  // How the daemon fails to answer, each as ConvoyHttpClient reports it (a
  // ConvoyError with status 0): its socket refuses, it answers after the
  // client's (default) request timeout, or what it sends back is not HTTP.
  enum class Fault { kNone, kDown, kSlow, kGarbage };

  FakeConvoyDaemon(std::string socket, std::string instance_id, SharedVfsPath* vfs_path,
                   EbsCloud* cloud, flexvolume::FakeMounter* host_mounts, Api daemon_api);

  std::string Endpoint() const override;
  VolumeInfo Create(const CreateRequest& request) override;
  std::optional<VolumeInfo> Inspect(const std::string& name) override;
  std::map<std::string, VolumeInfo> List() override;
  std::string Mount(const MountRequest& request) override;
  void Umount(const std::string& name) override;
  bool Delete(const std::string& name, bool reference_only) override;
  ApiProbe ProbeApi() override;
  std::string DaemonInstance() const override;

  // The daemon stops and starts again (its records kept, as on disk): a new
  // DaemonInstance, so a driver asks anew which API it has.
  void Restart();

  // Knobs. A stock daemon ignores the extension keys of a request, as
  // v0.5.2 ignores any key it does not know.
  Api api;
  Fault fault = Fault::kNone;
  // Where its mounts land: its host's table, unless it runs in another mount
  // namespace (a container without mount propagation), when the host sees
  // none of them.
  flexvolume::FakeMounter* mount_namespace;
  // A build of Convoy whose answer to ProbeApi's request the driver does
  // not know (status 400, this text): neither stock nor extended to it.
  std::string unfamiliar_probe_answer;
  // Its EBS answers lack DriverInfo.Device (a daemon that lost track of the
  // attachment).
  bool reports_no_device = false;
  // Runs once, as the next create arrives: another caller's request landing
  // between the driver's look-up and its create.
  std::function<void()> before_next_create;

  // What it was asked, for tests about "no request at all" or "asked once".
  int requests_received = 0;
  int probes_received = 0;

  // Its EBS records (<root>/ebs/ebs_volume_<name>.json), by volume name.
  struct EbsRecord {
    std::string volume_id;
    std::string device;
    std::string mount_point;
  };
  std::map<std::string, EbsRecord> ebs_records;

 private:
  // Counts the request (a down daemon gets none) and fails it as `fault` says.
  void Arrive(const std::string& request);
  // Throws what ConvoyHttpClient makes of an error answer (Go's http.Error:
  // the text plus a newline, shown on one line).
  [[noreturn]] void Refuse(const std::string& request, int status, const std::string& text) const;
  void CheckName(const std::string& request, const std::string& name) const;
  bool MountedHere(const std::string& request, const std::string& path);
  void MountHere(const std::string& request, const std::string& source, const std::string& target,
                 const std::string& fstype, unsigned long flags);
  void UnmountHere(const std::string& request, const std::string& target);
  // Attaches EBS volume `volume_id` to this instance (PR #161 first detaches
  // it from a stopped instance); returns the device.
  std::string AttachHere(const std::string& request, const std::string& volume_id);
  VolumeInfo CreateEbs(const std::string& request, const CreateRequest& create);
  std::string MountEbs(const std::string& request, const std::string& name,
                       const MountRequest& mount, EbsRecord& record);
  std::string MountVfs(const std::string& request, const std::string& name,
                       const MountRequest& mount, SharedVfsPath::Record& record);
  VolumeInfo EbsInfo(const std::string& name, const EbsRecord& record) const;

  std::string socket_;
  std::string instance_id_;
  SharedVfsPath* vfs_path_;
  EbsCloud* cloud_;
  int run_ = 1;
};

// The daemon behind each socket, as the driver asks for them.
class FakeConvoyDaemons final : public ConvoyClientFactory {
 public:
  // Starts a node's daemon on `socket`, mounting into `host_mounts`.
  FakeConvoyDaemon& Start(const std::string& socket, const std::string& instance_id,
                          flexvolume::FakeMounter* host_mounts, Api api = Api::kExtended);
  FakeConvoyDaemon& At(const std::string& socket) { return *daemons_.at(socket); }
  std::unique_ptr<ConvoyClient> ForSocket(const std::string& socket) override;

  SharedVfsPath vfs_path;
  EbsCloud cloud;
  std::vector<std::string> requested;  // the sockets the driver asked for, in order

 private:
  std::map<std::string, std::unique_ptr<FakeConvoyDaemon>> daemons_;
};

}  // namespace convoy_flexvolume
