#pragma once
// convoy-flexvolume's verbs (DESIGN.md §4.2), over the Convoy daemon of the
// node concerned.
//
// Attach mode (default; init reports attach:true):
//   attach        create-or-adopt on the node's daemon, reply with the device
//   waitforattach wait until the device exists (looked up when kubelet passes "")
//   isattached    ask the node's daemon; unreachable is a Failure, never "false"
//   mountdevice   mount the volume at kubelet's global path (ro honoured)
//   unmountdevice unmount whatever Convoy volume is mounted there
//   detach        drop the volume from the node's daemon (ReferenceOnly)
//   mount/unmount Not supported: kubelet bind-mounts the global path
// Mount-only mode ("mode": "mount"; attach:false): mount does create-or-adopt
// and mounts at the pod dir on the local daemon; unmount unmounts and detaches.
//
// Which Convoy (config `api`): with the Kubernetes extensions the daemon
// mounts where asked (VFS by bind mount), read-only when asked, formats the
// fsType asked and takes an EBS volume over from a stopped instance. Stock
// v0.5.2 does none of it, so the driver does what it can itself: VFS is
// mounted the v0.5.2 way (the daemon only records the volume's own
// directory) and the driver bind-mounts that directory at kubelet's path,
// remembering it in stateDir/bind-mounts; read-only is a remount by the
// driver; an xfs request and a take-over are Failures that say why. In
// `auto` each daemon is asked once per daemon start (ConvoyClient::ProbeApi),
// the answer kept in stateDir/daemon-api; a VFS mount refused with stock's
// "VFS doesn't support specified mount point" also settles it.
// Whatever the API, every mount is checked afterwards (mounted at the path,
// read-only when asked, the fsType asked) and a difference is a Failure.
//
// VFS volumes are shared directories (ReadWriteMany; driver/README.md):
// any number of nodes may have one attached and mounted at once. Convoy's
// record of a VFS volume, its MountPoint included, lives on the shared vfs
// path, so every node's daemon sees what any node did; it therefore proves
// nothing about one node. Each node's state is the driver's own, in
// stateDir: vfs-attachments (node, volume) says the volume is attached to
// that node (isattached answers from it), bind-mounts (path -> volume) that
// this driver mounted the volume at that path, on either API. A node's
// detach and teardown drop only its own records and unmount only its own
// mounts: detach never deletes the shared reference, and teardown never
// asks the daemon to unmount (its MountPoint may name another node's mount).
//
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/convoy/clock.h"
#include "driver/convoy/config.h"
#include "driver/convoy/convoy_client.h"
#include "driver/convoy/devices.h"
#include "driver/convoy/record_store.h"
#include "driver/convoy/volume_spec.h"
#include "driver/sdk/driver.h"
#include "driver/sdk/mounter.h"

namespace convoy_flexvolume {

// What the driver touches on the host, each with a real and a test version.
struct DriverDeps {
  ConvoyClientFactory* clients = nullptr;
  flexvolume::Mounter* mounter = nullptr;
  Clock* clock = nullptr;
  Devices* devices = nullptr;
};

// Inside the driver a failure is an exception (what() says what failed and
// why); each verb turns it into its Failure reply in one place (RunVerb).
// The SDK's Mounter keeps its bool + message style, converted once
// (MountAt, MountOrThrow, UnmountOrThrow).
class ConvoyDriver final : public flexvolume::Driver {
 public:
  // `config_error` non-empty: the config could not be loaded and every verb
  // fails with it, so a broken config is seen at once (init included).
  ConvoyDriver(Config config, std::string config_error, DriverDeps deps);

  flexvolume::DriverStatus Init() override;
  flexvolume::DriverStatus GetVolumeName(const flexvolume::Options& opts) override;
  flexvolume::DriverStatus Attach(const flexvolume::Options& opts,
                                  const std::string& node) override;
  flexvolume::DriverStatus Detach(const std::string& volume_name, const std::string& node) override;
  flexvolume::DriverStatus WaitForAttach(const std::string& device,
                                         const flexvolume::Options& opts) override;
  flexvolume::DriverStatus IsAttached(const flexvolume::Options& opts,
                                      const std::string& node) override;
  flexvolume::DriverStatus MountDevice(const std::string& dir, const std::string& device,
                                       const flexvolume::Options& opts) override;
  flexvolume::DriverStatus UnmountDevice(const std::string& dir) override;
  flexvolume::DriverStatus Mount(const std::string& dir, const flexvolume::Options& opts) override;
  flexvolume::DriverStatus Unmount(const std::string& dir) override;

 private:
  // What a verb checks before its body runs, in this order: a config that
  // did not load fails every verb; a verb of the other mode is Not supported;
  // `opts` must be a valid volume spec ("<verb>: <why>"); `path` must be
  // absolute ("<verb>: <path_rule>").
  struct VerbRules {
    const char* verb = nullptr;
    std::optional<Mode> mode = std::nullopt;  // the mode the verb works in; unset: both
    const flexvolume::Options* opts = nullptr;
    const std::string* path = nullptr;
    const char* path_rule = nullptr;
  };
  // Checks `rules`, then runs body(spec) (spec parsed from rules.opts, else
  // empty); an exception from it becomes a Failure "<what(spec)>: <what()>".
  template <typename What, typename Body>
  flexvolume::DriverStatus RunVerb(const VerbRules& rules, What what, Body body);

  std::unique_ptr<ConvoyClient> LocalClient();
  // The client for `node`'s daemon; throws for a node name that cannot be
  // used.
  std::unique_ptr<ConvoyClient> ClientForNode(const std::string& node);
  // The SDK's Mounter, which answers bool + message, as throwing calls.
  std::optional<flexvolume::MountEntry> MountAt(const std::string& dir);
  void MountOrThrow(const std::string& source, const std::string& target, unsigned long flags,
                    const std::string& what);
  void UnmountOrThrow(const std::string& dir);
  // Creates or adopts the volume on `client`'s daemon and returns it with
  // its device; *created says whether this call attached it.
  VolumeInfo EnsureAttached(ConvoyClient& client, const VolumeSpec& spec, bool* created);
  // Mounts the volume at `dir` unless it already is, then checks the result
  // (see MountDifference).
  void EnsureMounted(ConvoyClient& client, const VolumeSpec& spec, const std::string& dir);
  // Stock VFS: the v0.5.2 mount, then the driver's own bind mount of the
  // volume's directory at `dir`. Returns whether this call mounted it.
  bool MountStockVfs(ConvoyClient& client, const VolumeSpec& spec, const std::string& dir);
  void RemountReadOnly(const std::string& dir);
  // How `dir` differs from what `spec` asks (mounted, ro, fsType); "" if not.
  std::string MountDifference(ConvoyClient& client, const VolumeSpec& spec, const std::string& dir);
  // A volume UnmountAt took from a path; `shared` for a VFS volume, whose
  // Convoy reference other nodes share and which is therefore never deleted.
  struct Unmounted {
    std::string name;
    bool shared = false;
  };
  // Unmounts every Convoy volume mounted at `dir`: the VFS volume the driver
  // recorded there (unmounted by the driver alone, the daemon not asked),
  // else the EBS volume the daemon reports there.
  std::vector<Unmounted> UnmountAt(ConvoyClient& client, const std::string& dir);
  // Mounts VFS volume `spec` at `dir` through the daemon's BindMount (the
  // extensions), recorded as this node's mount. Returns whether it mounted.
  bool MountExtendedVfs(ConvoyClient& client, const VolumeSpec& spec, const std::string& dir);
  // Refuses a mount at `dir` that is not VFS volume `name` recorded there;
  // returns whether `name` is mounted there already.
  bool OwnVfsMountAt(const std::string& dir, const std::string& name);
  bool IsMountPoint(const std::string& dir);
  // The API of `client`'s daemon: the config's, or in auto what the daemon
  // answered (cached per daemon start).
  Api ApiOf(ConvoyClient& client);
  void RememberApi(ConvoyClient& client, Api api, const std::string& why);
  // The volume the driver itself bind-mounted at `dir`, if any.
  std::optional<std::string> BindMountAt(const std::string& dir) const;

  Config config_;
  std::string config_error_;
  DriverDeps deps_;
  RecordStore names_;                // (node, PV name) -> Convoy name, when `name` chose it
  RecordStore volume_ids_;           // Convoy name -> EBS volume id
  RecordStore daemon_apis_;          // daemon -> "<DaemonInstance> <stock|extended>"
  RecordStore bind_mounts_;          // mount path -> "<volume>\n<path>" (VFS, both APIs)
  RecordStore vfs_attachments_;      // (node, VFS volume) -> its directory
  std::map<std::string, Api> apis_;  // per daemon, settled in this call
};

}  // namespace convoy_flexvolume
