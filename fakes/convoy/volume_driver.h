#pragma once
// What the daemon asks of a storage driver (Convoy's convoydriver package),
// plus the Kubernetes extensions of DESIGN §6.1 (FSType, ReadWrite,
// BindMount, ReMount). A driver throws ConvoyError with the text the client
// should see; the daemon answers it as Convoy does (400, text + "\n").
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "fakes/common/errors.h"

namespace flexkit::fakes::convoy {

using InfoMap = std::map<std::string, std::string>;

struct ConvoyError : FakeError {
  explicit ConvoyError(const std::string& message, int status = 400)
      : FakeError(message), http_status(status) {}
  int http_status;
};

struct CreateRequest {
  std::string name;
  int64_t size = 0;
  std::string backup_url;  // already unescaped (\u0026 -> &)
  std::string driver_volume_id;
  std::string type;
  int64_t iops = 0;
  bool prepare_for_vm = false;
  std::string fs_type;  // extension: "" (ext4), "ext4" or "xfs"
};

struct MountRequest {
  std::string name;
  std::string mount_point;  // caller-chosen, "" for the driver default
  std::string read_write;   // extension: "", "rw" or "ro"
  std::string bind_mount;   // extension: "", "bind" or "rbind"
  bool remount = false;     // extension: allow moving to a new mount point
};

struct VolumeListing {
  InfoMap info;                              // as VolumeInfo returns it
  std::map<std::string, InfoMap> snapshots;  // as Snapshots returns them
  // Optionally pre-rendered (volume_json.h, depth 1) by a driver that caches
  // its listings: the list entry with ?driver=1 and without.
  std::string info_json, response_json;
};

class VolumeDriver {
 public:
  virtual ~VolumeDriver() = default;
  virtual std::string Name() const = 0;
  virtual InfoMap Info() const = 0;

  virtual void Create(const CreateRequest& request) = 0;
  virtual void Delete(const std::string& name, bool reference_only) = 0;
  virtual std::string Mount(const MountRequest& request) = 0;
  virtual void Umount(const std::string& name) = 0;
  virtual std::string MountPoint(const std::string& name) = 0;
  // The volume's info map, or nullopt when this driver has no such volume.
  virtual std::optional<InfoMap> VolumeInfo(const std::string& name) = 0;
  // Every listable volume: its info map and its snapshots' info maps,
  // shared rather than copied (a listing may hold 10,000 volumes).
  virtual std::map<std::string, std::shared_ptr<const VolumeListing>> List() = 0;
  virtual std::map<std::string, InfoMap> Snapshots(const std::string& volume) = 0;

  // Snapshots and backups; a driver without them throws ConvoyError.
  virtual void CreateSnapshot(const std::string& snapshot, const std::string& volume) = 0;
  virtual void DeleteSnapshot(const std::string& snapshot, const std::string& volume) = 0;
  virtual std::optional<InfoMap> SnapshotInfo(const std::string& snapshot,
                                              const std::string& volume) = 0;
  virtual std::string CreateBackup(const std::string& snapshot, const std::string& volume,
                                   const std::string& dest_url, const std::string& endpoint) = 0;
  // The backups this driver can see, by URL (Convoy merges every driver's).
  virtual std::map<std::string, InfoMap> ListBackups(const std::string& dest_url,
                                                     const std::string& volume_filter) = 0;
  // A backup URL this driver made (the daemon picks the driver by scheme).
  virtual InfoMap InspectBackup(const std::string& backup_url) = 0;
  virtual void DeleteBackup(const std::string& backup_url) = 0;
};

}  // namespace flexkit::fakes::convoy
