#include "fakes/convoy/vfs_driver.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fakes/common/files.h"
#include "fakes/convoy/driver_common.h"
#include "fakes/convoy/names.h"
#include "fakes/convoy/objectstore.h"
#include "fakes/convoy/volume_json.h"
#include "platform/read_file.h"
#include "platform/run_command.h"

namespace flexkit::fakes::convoy {
namespace {

constexpr std::string_view kVfsRecordPrefix = "vfs_volume_";
constexpr std::string_view kVfsRecordSuffix = ".json";

timespec MtimeOf(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};
  return st.st_mtim;
}

bool SameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Convoy takes `<record>.lock` around every save; opening it is where a bad
// name first fails ("no such file or directory", "file name too long").
class RecordLock {
 public:
  explicit RecordLock(const std::string& record) : path_(record + ".lock") {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw ConvoyError("Couldn't get flock. Error: open " + path_ + ": " + GoErrno(errno));
    }
    ::flock(fd_, LOCK_EX);
  }
  ~RecordLock() {
    ::unlink(path_.c_str());
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  RecordLock(const RecordLock&) = delete;
  RecordLock& operator=(const RecordLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

VfsDriver::VfsDriver(VfsConfig config, Mounter& mounter)
    : config_(std::move(config)), config_dir_(config_.path + "/config"), mounter_(mounter) {
  MakeDirs(config_.root, 0700);
  MakeDirs(config_dir_, 0700);
  nlohmann::ordered_json cfg = {{"Root", config_.root},
                                {"Path", config_.path},
                                {"ConfigPath", config_dir_},
                                {"DefaultVolumeSize", config_.default_volume_size}};
  WriteFileAtomically(config_.root + "/vfs.cfg", cfg.dump() + "\n");
  std::lock_guard lock(cache_mutex_);
  RefreshLocked();
}

InfoMap VfsDriver::Info() const {
  return {{"Root", config_.root},
          {"Path", config_.path},
          {"DefaultVolumeSize", std::to_string(config_.default_volume_size)}};
}

void VfsDriver::CheckSafe(const std::string& name) const {
  std::string data = CleanPath(config_.path + "/" + name);
  if (EscapesDirectory(config_.path, name) || IsWithin(data, config_dir_) ||
      !IsWithin(ConfigFile(name), config_dir_)) {
    throw ConvoyError("Invalid name " + name);
  }
}

std::string VfsDriver::ConfigFile(const std::string& name) const {
  return CleanPath(config_dir_ + "/" + std::string(kVfsRecordPrefix) + name +
                   std::string(kVfsRecordSuffix));
}

void VfsDriver::RefreshLocked() {
  timespec now = MtimeOf(config_dir_);
  if (SameTime(now, config_dir_mtime_) && !cache_.empty()) return;
  config_dir_mtime_ = now;
  std::map<std::string, Cached> fresh;
  DIR* dir = ::opendir(config_dir_.c_str());
  if (dir == nullptr) {
    cache_.clear();
    return;
  }
  while (dirent* entry = ::readdir(dir)) {
    std::string file = entry->d_name;
    if (file.size() < kVfsRecordSuffix.size() ||
        file.compare(file.size() - kVfsRecordSuffix.size(), kVfsRecordSuffix.size(),
                     kVfsRecordSuffix) != 0 ||
        file[0] == '.') {
      continue;
    }
    std::string path = config_dir_ + "/" + file;
    try {
      auto j = nlohmann::json::parse(platform::ReadWholeFile(path));
      Volume v;
      v.name = j.value("Name", "");
      v.size = j.value("Size", int64_t{0});
      v.path = j.value("Path", "");
      v.mount_point = j.value("MountPoint", "");
      v.prepare_for_vm = j.value("PrepareForVM", false);
      v.created_time = j.value("CreatedTime", "");
      if (j.contains("Snapshots") && j["Snapshots"].is_object()) {
        for (auto& [sname, s] : j["Snapshots"].items()) {
          v.snapshots[sname] = {s.value("Name", ""), s.value("CreatedTime", ""),
                                s.value("VolumeUUID", ""), s.value("FilePath", "")};
        }
      }
      fresh[path] = MakeCached(std::move(v), path);
    } catch (const std::exception&) {
      // A record being replaced or a foreign file: not a volume.
    }
  }
  ::closedir(dir);
  cache_.swap(fresh);
}

std::optional<VfsDriver::Volume> VfsDriver::Load(const std::string& name) {
  if (name.empty()) return std::nullopt;
  CheckSafe(name);
  std::string file = ConfigFile(name);
  std::lock_guard lock(cache_mutex_);
  RefreshLocked();
  auto it = cache_.find(file);
  if (it == cache_.end()) return std::nullopt;
  return it->second.volume;
}

VfsDriver::Cached VfsDriver::MakeCached(Volume v, const std::string& file) {
  auto listing = std::make_shared<VolumeListing>();
  listing->info = InfoOf(v);
  for (const auto& [sname, snap] : v.snapshots) listing->snapshots[sname] = SnapshotInfoOf(snap);
  // Listed under the name its record file gives.
  auto name =
      VolumeOfRecordFile(file.substr(file.rfind('/') + 1), kVfsRecordPrefix, kVfsRecordSuffix);
  if (name) {
    AppendInfo(listing->info_json, listing->info, "vfs", 1);
    AppendVolumeResponse(listing->response_json, *name, "vfs", *listing, 1);
  }
  bool valid = name && IsValidConvoyName(*name);
  return {std::move(v), std::move(listing), std::move(name), valid};
}

VfsDriver::Volume VfsDriver::LoadExisting(const std::string& name) {
  auto v = Load(name);
  if (!v) throw NoSuchVolume(name);
  return *v;
}

void VfsDriver::Save(const Volume& v) {
  std::string file = ConfigFile(v.name);
  RecordLock record_lock(file);
  nlohmann::ordered_json snapshots = nlohmann::ordered_json::object();
  for (const auto& [name, s] : v.snapshots) {
    snapshots[name] = {{"Name", s.name},
                       {"CreatedTime", s.created_time},
                       {"VolumeUUID", s.volume},
                       {"FilePath", s.file_path}};
  }
  nlohmann::ordered_json j = {{"Name", v.name},
                              {"Size", v.size},
                              {"Path", v.path},
                              {"MountPoint", v.mount_point},
                              {"PrepareForVM", v.prepare_for_vm},
                              {"CreatedTime", v.created_time},
                              {"Snapshots", snapshots}};
  {
    std::lock_guard lock(cache_mutex_);
    RefreshLocked();  // catch up with other daemons before our own change
  }
  WriteFileAtomically(file, j.dump() + "\n");
  NoteOwnChange(file, &v);
}

void VfsDriver::NoteOwnChange(const std::string& file, const Volume* volume) {
  std::lock_guard lock(cache_mutex_);
  // Our own rename changed the directory's mtime: take the new mtime as
  // seen rather than re-reading every record.
  config_dir_mtime_ = MtimeOf(config_dir_);
  if (volume) {
    cache_[file] = MakeCached(*volume, file);
  } else {
    cache_.erase(file);
  }
}

InfoMap VfsDriver::InfoOf(const Volume& v) {
  return {{"Path", v.path},
          {"MountPoint", v.mount_point},
          {"Size", std::to_string(v.size)},
          {"PrepareForVM", v.prepare_for_vm ? "true" : "false"},
          {"VolumeName", v.name},
          {"VolumeCreatedAt", v.created_time}};
}

InfoMap VfsDriver::SnapshotInfoOf(const Snapshot& s) {
  return {{"FilePath", s.file_path},
          {"SnapshotCreatedAt", s.created_time},
          {"SnapshotName", s.name},
          {"VolumeUUID", s.volume}};
}

void VfsDriver::Create(const CreateRequest& request) {
  CheckSafe(request.name);
  std::string restore_from;
  if (!request.backup_url.empty()) {
    InspectBackup(request.backup_url);  // fails early with Convoy's texts
    restore_from = request.backup_url;
  }
  std::string data_dir = CleanPath(config_.path + "/" + request.name);
  if (Load(request.name)) return;  // idempotent at driver level, as vfs is
  Volume v;
  v.name = request.name;
  v.path = data_dir;
  v.prepare_for_vm = request.prepare_for_vm;
  if (v.prepare_for_vm) v.size = request.size > 0 ? request.size : config_.default_volume_size;
  v.created_time = RubyDateNow();
  // Take the record lock before touching the data directory, so a name
  // that cannot be recorded changes nothing.
  { RecordLock probe(ConfigFile(v.name)); }
  AsConvoyError([&] { MakeDirs(data_dir, 0700); });
  if (!restore_from.empty()) RestoreBackup(restore_from, data_dir);
  Save(v);
}

void VfsDriver::Delete(const std::string& name, bool reference_only) {
  Volume v = LoadExisting(name);
  if (!v.mount_point.empty()) {
    throw ConvoyError("Cannot delete volume " + name + ". It is still mounted");
  }
  if (!reference_only) {
    std::error_code ec;
    std::filesystem::remove_all(v.path, ec);
    if (ec) throw ConvoyError("remove " + v.path + ": " + ec.message());
  }
  std::string file = ConfigFile(name);
  {
    RecordLock record_lock(file);
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      throw ConvoyError("remove " + file + ": " + GoErrno(errno));
    }
  }
  NoteOwnChange(file, nullptr);
}

std::string VfsDriver::Mount(const MountRequest& request) {
  Volume v = LoadExisting(request.name);
  if (request.bind_mount.empty()) {
    if (!request.mount_point.empty())
      throw ConvoyError("VFS doesn't support specified mount point");
    if (v.prepare_for_vm) {
      std::string image = v.path + "/disk.img";
      struct stat st {};
      if (::stat(image.c_str(), &st) != 0 &&
          platform::RunCommand({"truncate", "-s", std::to_string(v.size), image}).exit_code != 0) {
        throw ConvoyError("create " + image + " of " + std::to_string(v.size) + " bytes failed");
      }
    }
    if (v.mount_point != v.path) {
      v.mount_point = v.path;
      Save(v);
    }
    return v.mount_point;
  }
  // PR #161: bind-mount the volume directory at the caller's mount point.
  if (request.bind_mount != "bind" && request.bind_mount != "rbind") {
    throw ConvoyError("Invalid BindMount " + request.bind_mount + ": use bind or rbind");
  }
  CheckReadWrite(request.read_write);
  if (request.mount_point.empty()) return "";
  std::string target = CheckedMountPoint(request.mount_point);
  const std::string& previous = v.mount_point;
  bool previous_is_bind = !previous.empty() && previous != v.path;
  if (previous == target && mounter_.IsMountPoint(target)) return target;
  AsConvoyError([&] {
    if (previous_is_bind && previous != target && mounter_.IsMountPoint(previous)) {
      if (!request.remount) throw AlreadyMounted(v.name, previous, target);
      mounter_.Unmount(previous);
    }
    MakeDirs(target, 0755);
    mounter_.Mount(v.path, target, "",
                   {.bind = true,
                    .recursive = request.bind_mount == "rbind",
                    .read_only = request.read_write == "ro"});
  });
  v.mount_point = target;
  Save(v);
  return target;
}

void VfsDriver::Umount(const std::string& name) {
  Volume v = LoadExisting(name);
  if (v.mount_point.empty()) return;
  if (v.mount_point != v.path && mounter_.IsMountPoint(v.mount_point)) {
    AsConvoyError([&] { mounter_.Unmount(v.mount_point); });
  }
  v.mount_point.clear();
  Save(v);
}

std::string VfsDriver::MountPoint(const std::string& name) {
  return LoadExisting(name).mount_point;
}

std::optional<InfoMap> VfsDriver::VolumeInfo(const std::string& name) {
  auto v = Load(name);
  if (!v) return std::nullopt;
  return InfoOf(*v);
}

std::map<std::string, std::shared_ptr<const VolumeListing>> VfsDriver::List() {
  std::lock_guard lock(cache_mutex_);
  RefreshLocked();
  std::map<std::string, std::shared_ptr<const VolumeListing>> out;
  for (const auto& [file, cached] : cache_) {
    if (!cached.listed_name) continue;
    // Convoy fails the whole listing (silently: "{}") on one bad name.
    if (!cached.valid_name) return {};
    out.emplace_hint(out.end(), *cached.listed_name, cached.listing);
  }
  return out;
}

std::map<std::string, InfoMap> VfsDriver::Snapshots(const std::string& volume) {
  std::map<std::string, InfoMap> out;
  for (const auto& [name, s] : LoadExisting(volume).snapshots) out[name] = SnapshotInfoOf(s);
  return out;
}

void VfsDriver::CreateSnapshot(const std::string& snapshot, const std::string& volume) {
  Volume v = LoadExisting(volume);
  std::string dir = config_.root + "/snapshots";
  MakeDirs(dir, 0700);
  std::string file = dir + "/" + volume + "_" + snapshot + ".tar.gz";
  AsConvoyError([&] { platform::RunCommandOrThrow({"tar", "-czf", file, "-C", v.path, "."}); });
  v.snapshots[snapshot] = {snapshot, RubyDateNow(), volume, file};
  Save(v);
}

void VfsDriver::DeleteSnapshot(const std::string& snapshot, const std::string& volume) {
  Volume v = LoadExisting(volume);
  auto it = v.snapshots.find(snapshot);
  if (it == v.snapshots.end()) throw NoSuchSnapshot(snapshot, volume);
  ::unlink(it->second.file_path.c_str());
  v.snapshots.erase(it);
  Save(v);
}

std::optional<InfoMap> VfsDriver::SnapshotInfo(const std::string& snapshot,
                                               const std::string& volume) {
  Volume v = LoadExisting(volume);
  auto it = v.snapshots.find(snapshot);
  if (it == v.snapshots.end()) return std::nullopt;
  return SnapshotInfoOf(it->second);
}

std::string VfsDriver::CreateBackup(const std::string& snapshot, const std::string& volume,
                                    const std::string& dest_url, const std::string& endpoint) {
  if (!endpoint.empty()) throw ConvoyError("Driver vfs does not support custom endpoints");
  Volume v = LoadExisting(volume);
  auto it = v.snapshots.find(snapshot);
  if (it == v.snapshots.end()) throw NoSuchSnapshot(snapshot, volume);
  return convoy::CreateBackup(dest_url, {.driver = "vfs",
                                         .volume_name = volume,
                                         .volume_created_at = v.created_time,
                                         .volume_size = std::to_string(v.size),
                                         .snapshot_name = snapshot,
                                         .snapshot_created_at = it->second.created_time,
                                         .tarball = it->second.file_path});
}

std::map<std::string, InfoMap> VfsDriver::ListBackups(const std::string& dest_url,
                                                      const std::string& volume_filter) {
  return convoy::ListBackups(dest_url, volume_filter);
}

InfoMap VfsDriver::InspectBackup(const std::string& backup_url) {
  return convoy::InspectBackup(backup_url);
}

void VfsDriver::DeleteBackup(const std::string& backup_url) { convoy::DeleteBackup(backup_url); }

}  // namespace flexkit::fakes::convoy
