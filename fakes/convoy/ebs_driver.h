#pragma once
// Convoy's ebs driver (reference §2.2) over the fake cloud, with PR #161's
// changes and the Kubernetes extensions: attach happens at create (new
// volume, or adoption of DriverVolumeID), a blank device is formatted
// (FSType ext4 or xfs; another filesystem already there is an error, never a
// reformat), mount/umount only mount. The host device is a link
// `<state dir>/dev/xvd?` to the attachment's loop device.
//
// Failover (DESIGN §6.3): adopting a volume attached to another instance is
// refused while that instance runs; when it is stopped or terminated the
// volume is detached there (forced if it stays busy) and attached here.
// Detach only ever names this instance, so a late detach from an old host
// cannot touch the new attachment.
//
// On start the driver reconciles its records with the cloud: a volume still
// attached here gets its device link back and is remounted; one that is not
// is left unmounted and its record says "Attached": false.
//
// `stock` plays v0.5.2's ebs driver instead: no take-over (adopting a volume
// attached elsewhere fails with the cloud's VolumeInUse), no mkfs of an
// adopted volume, and no FSType or Attached in the volume's info.
//
// Snapshots are EBS snapshots (the filesystem is synced first when the
// volume is mounted); the volume record keeps Convoy's reference to each,
// and deleting a Convoy snapshot only drops that reference. A backup of a
// snapshot waits for it to complete and is its URL ebs://<region>/<snap-id>
// (the destination URL is ignored, as Convoy does); deleting a backup
// deletes the EBS snapshot, and creating a volume from a backup URL makes a
// new EBS volume from that snapshot (no mkfs: the data is the snapshot's).
#include <functional>
#include <map>
#include <string>

#include "fakes/convoy/cloud_client.h"
#include "fakes/convoy/mounter.h"
#include "fakes/convoy/volume_driver.h"

namespace flexkit::fakes::convoy {

struct EbsConfig {
  std::string root;     // <state dir>/ebs: records and default mount points
  std::string dev_dir;  // <state dir>/dev: the host's device links
  std::string cloud_socket;
  std::string instance_id;
  int64_t default_volume_size = 4LL << 30;
  std::string default_volume_type = "gp2";
  int64_t wait_timeout_ms = 60000;  // for creating/attaching/detaching
  int64_t busy_grace_ms = 2000;     // before a failover forces a busy detach
  bool stock = false;               // v0.5.2 as released (see above)
};

class EbsDriver : public VolumeDriver {
 public:
  EbsDriver(EbsConfig config, Mounter& mounter);

  std::string Name() const override { return "ebs"; }
  InfoMap Info() const override;
  void Create(const CreateRequest& request) override;
  void Delete(const std::string& name, bool reference_only) override;
  std::string Mount(const MountRequest& request) override;
  void Umount(const std::string& name) override;
  std::string MountPoint(const std::string& name) override;
  std::optional<InfoMap> VolumeInfo(const std::string& name) override;
  std::map<std::string, std::shared_ptr<const VolumeListing>> List() override;
  std::map<std::string, InfoMap> Snapshots(const std::string& volume) override;
  void CreateSnapshot(const std::string& snapshot, const std::string& volume) override;
  void DeleteSnapshot(const std::string& snapshot, const std::string& volume) override;
  std::optional<InfoMap> SnapshotInfo(const std::string& snapshot,
                                      const std::string& volume) override;
  std::string CreateBackup(const std::string& snapshot, const std::string& volume,
                           const std::string& dest_url, const std::string& endpoint) override;
  std::map<std::string, InfoMap> ListBackups(const std::string& dest_url,
                                             const std::string& volume_filter) override;
  InfoMap InspectBackup(const std::string& backup_url) override;
  void DeleteBackup(const std::string& backup_url) override;

 private:
  struct SnapshotRecord {
    std::string name, ebs_id, created_time;
  };
  struct Record {
    std::string name, ebs_id, device, loop_device, mount_point, fs_type, read_write, created_time;
    bool pre_exist = false, attached = false;
    std::map<std::string, SnapshotRecord> snapshots;
  };
  struct BackupLocation {
    std::string region, snapshot_id;
  };

  void Reconcile();
  std::string RecordFile(const std::string& name) const;
  std::optional<Record> Load(const std::string& name) const;
  Record LoadExisting(const std::string& name) const;
  void Save(const Record& r) const;
  nlohmann::json Call(const std::string& op, const nlohmann::json& body) const;
  nlohmann::json Describe(const std::string& volume_id) const;  // waits out NotFound
  // Polls until `done(volume)` holds; throws with `what` after the timeout.
  nlohmann::json WaitFor(const std::string& volume_id, const std::string& what,
                         const std::function<bool(const nlohmann::json&)>& done,
                         int64_t timeout_ms) const;
  nlohmann::json DescribeSnapshot(const std::string& snapshot_id) const;
  // Waits until the snapshot has left `pending`; throws unless `completed`.
  nlohmann::json WaitForSnapshot(const std::string& snapshot_id) const;
  // Checks an ebs://<region>/<snap-id> URL and that it is in this region.
  BackupLocation ParseBackupUrl(const std::string& url) const;
  InfoMap SnapshotInfoOf(const Record& r, const SnapshotRecord& s,
                         const nlohmann::json* described) const;
  static InfoMap BackupInfoOf(const std::string& url, const nlohmann::json& snapshot);
  std::string BackupUrlOf(const std::string& snapshot_id) const;
  void TakeOverFrom(const std::string& volume_id, const std::string& other_instance) const;
  // Attaches to this instance (or finds the existing attachment); returns it.
  nlohmann::json AttachHere(const std::string& volume_id) const;
  void DetachHere(const std::string& volume_id) const;
  std::string LinkDevice(const nlohmann::json& attachment) const;
  void Format(const std::string& device, const std::string& wanted, bool blank_allowed) const;
  InfoMap InfoOf(const Record& r) const;

  EbsConfig config_;
  Mounter& mounter_;
  CloudClient cloud_;
  std::string zone_, region_;  // this instance's, from the cloud
};

}  // namespace flexkit::fakes::convoy
