#pragma once
// Convoy's vfs driver (reference §2.3): a volume is a directory under the
// vfs path, its record `<vfs path>/config/vfs_volume_<name>.json` (shared by
// every daemon on that path, which is how vfs volumes move between hosts).
// Mount only records the directory as the mount point, unless the PR #161
// BindMount extension asks for a real bind mount at a caller's mount point.
//
// Records are cached in memory and re-read when the config directory's
// mtime says another daemon changed it (every write is a rename into it),
// so that listing 10,000 volumes does not read 10,000 files.
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "fakes/convoy/mounter.h"
#include "fakes/convoy/volume_driver.h"

namespace flexkit::fakes::convoy {

struct VfsConfig {
  std::string root;  // <state dir>/vfs: vfs.cfg and snapshots/
  std::string path;  // the vfs path: volumes and config/
  int64_t default_volume_size = 107374182400;
};

class VfsDriver : public VolumeDriver {
 public:
  VfsDriver(VfsConfig config, Mounter& mounter);

  std::string Name() const override { return "vfs"; }
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
  struct Snapshot {
    std::string name, created_time, volume, file_path;
  };
  struct Volume {
    std::string name;
    int64_t size = 0;
    std::string path, mount_point;
    bool prepare_for_vm = false;
    std::string created_time;
    std::map<std::string, Snapshot> snapshots;
  };

  // Refuses names that would leave the vfs path or land on config/.
  void CheckSafe(const std::string& name) const;
  std::string ConfigFile(const std::string& name) const;
  std::optional<Volume> Load(const std::string& name);
  Volume LoadExisting(const std::string& name);
  void Save(const Volume& volume);
  void RefreshLocked();
  // Records our own write (volume) or removal (nullptr) of a record file.
  void NoteOwnChange(const std::string& file, const Volume* volume);
  static InfoMap InfoOf(const Volume& v);
  static InfoMap SnapshotInfoOf(const Snapshot& s);

  VfsConfig config_;
  std::string config_dir_;
  Mounter& mounter_;
  std::mutex cache_mutex_;
  struct Cached {
    Volume volume;
    std::shared_ptr<const VolumeListing> listing;  // built once per change
    std::optional<std::string> listed_name;        // from the record's file name
    bool valid_name = false;                       // Convoy's name rule holds
  };
  static Cached MakeCached(Volume v, const std::string& file);
  std::map<std::string, Cached> cache_;  // by record file path
  timespec config_dir_mtime_{};
};

}  // namespace flexkit::fakes::convoy
