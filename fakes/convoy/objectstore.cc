#include "fakes/convoy/objectstore.h"

#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "fakes/common/errors.h"
#include "fakes/common/files.h"
#include "fakes/convoy/driver_common.h"
#include "fakes/convoy/names.h"
#include "platform/read_file.h"
#include "platform/run_command.h"

namespace flexkit::fakes::convoy {
namespace {

struct Location {
  std::string dir;  // the store's directory
};

// The store directory named by a destination URL; checks it exists.
Location ParseDestination(const std::string& url) {
  auto colon = url.find("://");
  std::string scheme = colon == std::string::npos ? "" : url.substr(0, colon);
  std::string rest;
  if (url.rfind("vfs:", 0) == 0) {
    scheme = "vfs";
    rest = url.substr(4);
    if (rest.rfind("//", 0) == 0) {
      auto slash = rest.find('/', 2);
      rest = slash == std::string::npos ? "" : rest.substr(slash);
    }
  }
  if (scheme != "vfs") throw ConvoyError("Driver " + scheme + " is not supported!");
  std::string path = rest.substr(0, rest.find('?'));
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw ConvoyError("VFS path " + path + " doesn't exist or is not a directory");
  }
  return {path};
}

std::string QueryValue(const std::string& url, const std::string& key) {
  auto q = url.find('?');
  if (q == std::string::npos) return "";
  std::string query = url.substr(q + 1);
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    std::string pair = query.substr(pos, amp - pos);
    pos = amp + 1;
    auto eq = pair.find('=');
    if (eq != std::string::npos && pair.substr(0, eq) == key) return pair.substr(eq + 1);
  }
  return "";
}

std::string VolumeDir(const std::string& volume) {
  std::string a = volume.substr(0, 2), b = volume.size() > 2 ? volume.substr(2, 2) : "";
  return "convoy-objectstore/volumes/" + a + "/" + b + "/" + volume;
}

struct BackupRef {
  Location store;
  std::string backup, volume;
  std::string cfg_relative() const {
    return VolumeDir(volume) + "/backups/backup_" + backup + ".cfg";
  }
  std::string blob() const {
    return store.dir + "/" + VolumeDir(volume) + "/blobs/" + backup + ".tar.gz";
  }
};

BackupRef ParseBackupUrl(const std::string& url) {
  std::string backup = QueryValue(url, "backup"), volume = QueryValue(url, "volume");
  if (!IsValidPluginName(backup) || !IsValidPluginName(volume)) {
    throw ConvoyError("Invalid name parsed, got " + backup + " and " + volume);
  }
  return {ParseDestination(url), backup, volume};
}

std::string UrlOf(const std::string& dir, const std::string& backup, const std::string& volume) {
  return "vfs://" + dir + "?backup=" + backup + "&volume=" + volume;
}

InfoMap LoadRecord(const BackupRef& ref) {
  std::string path = ref.store.dir + "/" + ref.cfg_relative();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ConvoyError("cannot find " + ref.cfg_relative() + " in objectstore");
  }
  InfoMap info = ReadRecord(
      path, [&] { return nlohmann::json::parse(platform::ReadWholeFile(path)).get<InfoMap>(); });
  info["BackupURL"] = UrlOf(ref.store.dir, ref.backup, ref.volume);
  return info;
}

}  // namespace

std::string UnescapeBackupUrl(std::string url) {
  for (size_t pos; (pos = url.find("\\u0026")) != std::string::npos;) url.replace(pos, 6, "&");
  return url;
}

std::string CreateBackup(const std::string& dest_url, const BackupSource& source) {
  if (dest_url.empty()) throw ConvoyError("Destination URL hasn't been specified");
  Location store = ParseDestination(dest_url);
  std::string backup = GenerateName("backup");
  BackupRef ref{store, backup, source.volume_name};
  std::string volume_dir = store.dir + "/" + VolumeDir(source.volume_name);
  MakeDirs(volume_dir + "/backups", 0700);
  MakeDirs(volume_dir + "/blobs", 0700);
  try {
    std::filesystem::copy_file(source.tarball, ref.blob());
  } catch (const std::exception& e) {
    throw ConvoyError("copy " + source.tarball + " to the objectstore: " + ReplyText(e));
  }
  nlohmann::json record = {{"BackupName", backup},
                           {"CreatedTime", RubyDateNow()},
                           {"DriverName", source.driver},
                           {"SnapshotCreatedAt", source.snapshot_created_at},
                           {"SnapshotName", source.snapshot_name},
                           {"VolumeCreatedAt", source.volume_created_at},
                           {"VolumeName", source.volume_name},
                           {"VolumeSize", source.volume_size}};
  WriteFileAtomically(store.dir + "/" + ref.cfg_relative(), record.dump() + "\n");
  return UrlOf(store.dir, backup, source.volume_name);
}

std::map<std::string, InfoMap> ListBackups(const std::string& dest_url,
                                           const std::string& volume_filter) {
  if (dest_url.empty()) throw ConvoyError("Destination URL hasn't been specified");
  Location store = ParseDestination(dest_url);
  std::map<std::string, InfoMap> out;
  std::error_code ec;
  std::filesystem::path root = store.dir + "/convoy-objectstore/volumes";
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& p = it->path();
    std::string file = p.filename().string();
    if (p.parent_path().filename() != "backups" || file.rfind("backup_", 0) != 0 ||
        p.extension() != ".cfg") {
      continue;
    }
    std::string volume = p.parent_path().parent_path().filename().string();
    if (!volume_filter.empty() && volume != volume_filter) continue;
    std::string backup = file.substr(7, file.size() - 7 - 4);
    InfoMap info = LoadRecord({store, backup, volume});
    out[info["BackupURL"]] = info;
  }
  return out;
}

InfoMap InspectBackup(const std::string& backup_url) {
  return LoadRecord(ParseBackupUrl(backup_url));
}

void DeleteBackup(const std::string& backup_url) {
  BackupRef ref = ParseBackupUrl(backup_url);
  LoadRecord(ref);
  std::filesystem::remove(ref.blob());
  std::filesystem::remove(ref.store.dir + "/" + ref.cfg_relative());
}

void RestoreBackup(const std::string& backup_url, const std::string& dir) {
  BackupRef ref = ParseBackupUrl(backup_url);
  LoadRecord(ref);
  try {
    platform::RunCommandOrThrow({"tar", "-xzf", ref.blob(), "-C", dir});
  } catch (const std::exception& e) {
    throw ConvoyError("restore backup: " + ReplyText(e));
  }
}

}  // namespace flexkit::fakes::convoy
