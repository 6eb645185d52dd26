#pragma once
// Convoy's `vfs://` backup store: a directory holding
//   convoy-objectstore/volumes/<v[0:2]>/<v[2:4]>/<volume>/backups/backup_<name>.cfg
// (the backup's record) and .../blobs/<name>.tar.gz (the snapshot tarball).
// URLs look like vfs:///dir?backup=backup-<16 hex>&volume=<volume>.
#include <map>
#include <string>

#include "fakes/convoy/volume_driver.h"

namespace flexkit::fakes::convoy {

struct BackupSource {
  std::string driver;  // "vfs"
  std::string volume_name, volume_created_at, volume_size;
  std::string snapshot_name, snapshot_created_at;
  std::string tarball;  // the snapshot file to store
};

// Each throws ConvoyError with Convoy's texts.
std::string CreateBackup(const std::string& dest_url, const BackupSource& source);
std::map<std::string, InfoMap> ListBackups(const std::string& dest_url,
                                           const std::string& volume_filter);
InfoMap InspectBackup(const std::string& backup_url);
void DeleteBackup(const std::string& backup_url);
// Extracts the backup's tarball into `dir` (which exists).
void RestoreBackup(const std::string& backup_url, const std::string& dir);
// Convoy's util.UnescapeURL: the literal `\u0026` back to `&`.
std::string UnescapeBackupUrl(std::string url);

}  // namespace flexkit::fakes::convoy
