#include "tests/driver/convoy/fake_convoy_daemon.h"

#include <sys/mount.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "tests/driver/convoy/borrowed_client.h"

namespace convoy_flexvolume {
namespace {

// The request lines ConvoyHttpClient names in its errors.
constexpr const char* kCreateRequest = "POST /v1/volumes/create";
constexpr const char* kInspectRequest = "GET /v1/volumes/";
constexpr const char* kListRequest = "GET /v1/volumes/list";
constexpr const char* kMountRequest = "POST /v1/volumes/mount";
constexpr const char* kUmountRequest = "POST /v1/volumes/umount";
constexpr const char* kDeleteRequest = "DELETE /v1/volumes/";
constexpr const char* kProbeRequest = R"(POST /v1/volumes/mount {"VolumeName":"","ReadWrite":0})";

constexpr const char* kVfsPathRoot = "/vfs";  // the daemons' vfs.path
constexpr const char* kEbsDefaultMounts = "/var/lib/rancher/convoy/ebs/mounts";
constexpr const char* kEbsZone = "us-east-1a";
constexpr const char* kAwsRequestId = "5f0c1e6a-9f4b-4c1e-8f55-0d6f7a3b2c11";
// Every volume's VolumeCreatedAt: the recording's (a Ruby date).
constexpr const char* kRecordedCreatedAt = "Mon Nov 30 08:20:53 +0000 2026";
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kEbsDefaultSize = 4 * kGiB;  // ebs.defaultvolumesize

// Convoy's parseAwsError: two spaces after the colon, the original error
// (none) and the HTTP status with AWS's request id on a second line.
std::string AwsError(const std::string& code, const std::string& message) {
  return "AWS Error:  " + code + " " + message + " <nil>\n400 " + kAwsRequestId;
}

VolumeInfo VfsVolumeInfo(const std::string& name, const SharedVfsPath::Record& record) {
  VolumeInfo v;
  v.name = name;
  v.driver = "vfs";
  v.mount_point = record.mount_point;
  v.driver_info = {{"Driver", "vfs"},     {"MountPoint", record.mount_point},
                   {"Path", record.path}, {"PrepareForVM", "false"},
                   {"Size", "0"},         {"VolumeCreatedAt", kRecordedCreatedAt},
                   {"VolumeName", name}};
  return v;
}

// An id no volume of `cloud` has, shaped as EC2's (vol- and 17 hex digits).
std::string UnusedVolumeId(const EbsCloud& cloud) {
  for (unsigned long long n = 1;; ++n) {
    char id[32];
    std::snprintf(id, sizeof id, "vol-%017llx", n);
    if (cloud.volumes.count(id) == 0) return id;
  }
}

}  // namespace

FakeConvoyDaemon::FakeConvoyDaemon(std::string socket, std::string instance_id,
                                   SharedVfsPath* vfs_path, EbsCloud* cloud,
                                   flexvolume::FakeMounter* host_mounts, Api daemon_api)
    : api(daemon_api),
      mount_namespace(host_mounts),
      socket_(std::move(socket)),
      instance_id_(std::move(instance_id)),
      vfs_path_(vfs_path),
      cloud_(cloud) {}

std::string FakeConvoyDaemon::Endpoint() const { return "convoy at " + socket_; }

std::string FakeConvoyDaemon::DaemonInstance() const {
  return socket_ + " run " + std::to_string(run_);
}

void FakeConvoyDaemon::Restart() { ++run_; }

void FakeConvoyDaemon::Arrive(const std::string& request) {
  const std::string what = Endpoint() + ": " + request + ": ";
  if (fault == Fault::kDown) throw ConvoyError(what + "cannot connect: Connection refused", 0);
  ++requests_received;
  if (fault == Fault::kSlow) {
    throw ConvoyError(
        what + "no complete reply within " + std::to_string(Timeouts{}.request.count()) + " ms", 0);
  }
  if (fault == Fault::kGarbage) throw ConvoyError(what + "no valid HTTP reply: bad version", 0);
}

void FakeConvoyDaemon::Refuse(const std::string& request, int status,
                              const std::string& text) const {
  std::string one_line = text;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  throw ConvoyError(Endpoint() + ": " + request + ": " + std::to_string(status) + " " + one_line,
                    status);
}

void FakeConvoyDaemon::CheckName(const std::string& request, const std::string& name) const {
  // util.CheckName, ^[a-zA-Z0-9][a-zA-Z0-9_.-]+$; the empty name passes.
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  const bool valid =
      name.size() >= 2 && alnum(name[0]) && std::all_of(name.begin(), name.end(), [&](char c) {
        return alnum(c) || c == '_' || c == '.' || c == '-';
      });
  if (!name.empty() && !valid) Refuse(request, 400, "Invalid name " + name);
}

bool FakeConvoyDaemon::MountedHere(const std::string& request, const std::string& path) {
  std::optional<flexvolume::MountEntry> found;
  std::string err;
  if (!mount_namespace->FindMount(path, &found, &err)) Refuse(request, 400, err);
  return found.has_value();
}

void FakeConvoyDaemon::MountHere(const std::string& request, const std::string& source,
                                 const std::string& target, const std::string& fstype,
                                 unsigned long flags) {
  std::string err;
  if (!mount_namespace->Mount(source, target, fstype, flags, "", &err)) Refuse(request, 400, err);
}

void FakeConvoyDaemon::UnmountHere(const std::string& request, const std::string& target) {
  std::string err;
  if (!mount_namespace->Unmount(target, &err)) Refuse(request, 400, err);
}

VolumeInfo FakeConvoyDaemon::EbsInfo(const std::string& name, const EbsRecord& record) const {
  const EbsCloud::Volume& disk = cloud_->volumes.at(record.volume_id);
  VolumeInfo v;
  v.name = name;
  v.driver = "ebs";
  v.mount_point = record.mount_point;
  v.driver_info = {{"AvailiablityZone", kEbsZone},  // sic, as Convoy spells it
                   {"Device", record.device},
                   {"Driver", "ebs"},
                   {"EBSVolumeID", record.volume_id},
                   {"IOPS", std::to_string(disk.iops)},
                   {"KmsKeyId", ""},
                   {"MountPoint", record.mount_point},
                   {"Size", std::to_string(disk.size)},
                   {"State", disk.instance.empty() ? "available" : "in-use"},
                   {"Type", disk.type},
                   {"VolumeCreatedAt", kRecordedCreatedAt},
                   {"VolumeName", name}};
  if (api == Api::kExtended) {
    v.driver_info["FSType"] = disk.filesystem;
    // A reference kept after the volume moved to another instance.
    v.driver_info["Attached"] = disk.instance == instance_id_ ? "true" : "false";
  }
  if (reports_no_device) v.driver_info.erase("Device");
  return v;
}

std::string FakeConvoyDaemon::AttachHere(const std::string& request, const std::string& volume_id) {
  EbsCloud::Volume& disk = cloud_->volumes.at(volume_id);
  if (!disk.instance.empty() && disk.instance != instance_id_) {
    // v0.5.2 has no detach-before-attach: the cloud refuses the attach.
    if (api == Api::kStock) {
      Refuse(request, 400,
             AwsError("VolumeInUse", volume_id + " is already attached to an instance"));
    }
    if (cloud_->stopped_instances.count(disk.instance) == 0) {
      Refuse(request, 400,
             "can't re-use ebs volumeID: " + volume_id + " from instanceID: " + disk.instance +
                 ", instance is running");
    }
    disk.instance.clear();  // PR #161: detached from the stopped instance first
  }
  if (disk.instance.empty()) {
    // The lowest of /dev/xvd[f-p] that no volume of this instance has.
    for (char letter = 'f'; letter <= 'p' && disk.instance.empty(); ++letter) {
      const std::string device = std::string("/dev/xvd") + letter;
      const bool taken = std::any_of(cloud_->volumes.begin(), cloud_->volumes.end(), [&](auto& v) {
        return v.second.instance == instance_id_ && v.second.device == device;
      });
      if (!taken) {
        disk.instance = instance_id_;
        disk.device = device;
      }
    }
    if (disk.instance.empty())
      Refuse(request, 400, "Cannot find an available device for instance " + instance_id_);
  }
  return disk.device;
}

VolumeInfo FakeConvoyDaemon::CreateEbs(const std::string& request, const CreateRequest& create) {
  std::string volume_id = create.driver_volume_id;
  const bool created_here = volume_id.empty();
  if (created_here) {
    EbsCloud::Volume disk;
    const int64_t asked = create.size > 0 ? create.size : kEbsDefaultSize;
    disk.size = (asked + kGiB - 1) / kGiB * kGiB;
    if (!create.type.empty()) disk.type = create.type;
    disk.iops = create.iops;
    volume_id = UnusedVolumeId(*cloud_);
    cloud_->volumes[volume_id] = disk;
  } else if (cloud_->volumes.count(volume_id) == 0) {
    Refuse(request, 400,
           AwsError("InvalidVolume.NotFound", "The volume '" + volume_id + "' does not exist."));
  }
  const std::string device = AttachHere(request, volume_id);
  // A blank disk is formatted: by v0.5.2 only when it made the disk, always
  // as ext4; with the extensions as FSType asks, and another filesystem than
  // the one asked is refused, never reformatted.
  EbsCloud::Volume& disk = cloud_->volumes.at(volume_id);
  const std::string asked_fs = api == Api::kExtended && create.extensions ? create.fs_type : "";
  if (disk.filesystem.empty() && (created_here || api == Api::kExtended)) {
    disk.filesystem = asked_fs.empty() ? "ext4" : asked_fs;
  } else if (!asked_fs.empty() && disk.filesystem != asked_fs) {
    disk.instance.clear();  // the attach is undone
    disk.device.clear();
    Refuse(request, 400,
           "device " + device + " already has a " + disk.filesystem + " filesystem, not " +
               asked_fs + "; refusing to reformat");
  }
  EbsRecord& record = ebs_records[create.name];
  record = {volume_id, device, ""};
  return EbsInfo(create.name, record);
}

VolumeInfo FakeConvoyDaemon::Create(const CreateRequest& request) {
  Arrive(kCreateRequest);
  if (auto other_caller = std::exchange(before_next_create, nullptr)) other_caller();
  const std::string& name = request.name;
  // Names are global across drivers, and checked before the driver is.
  if (ebs_records.count(name) > 0 || vfs_path_->records.count(name) > 0)
    Refuse(kCreateRequest, 400, "Volume " + name + " already exists ");
  const std::string driver = request.driver_name.empty() ? "ebs" : request.driver_name;
  if (driver == "ebs") return CreateEbs(kCreateRequest, request);
  if (driver != "vfs") Refuse(kCreateRequest, 400, "Cannot find driver " + driver);
  SharedVfsPath::Record& record = vfs_path_->records[name];
  record = {std::string(kVfsPathRoot) + "/" + name, ""};
  return VfsVolumeInfo(name, record);
}

std::optional<VolumeInfo> FakeConvoyDaemon::Inspect(const std::string& name) {
  Arrive(kInspectRequest);
  CheckName(kInspectRequest, name);
  if (auto it = ebs_records.find(name); it != ebs_records.end()) return EbsInfo(name, it->second);
  if (auto it = vfs_path_->records.find(name); it != vfs_path_->records.end())
    return VfsVolumeInfo(name, it->second);
  return std::nullopt;  // 404 "Volume not found."
}

std::map<std::string, VolumeInfo> FakeConvoyDaemon::List() {
  Arrive(kListRequest);
  std::map<std::string, VolumeInfo> volumes;
  for (const auto& [name, record] : ebs_records) volumes[name] = EbsInfo(name, record);
  for (const auto& [name, record] : vfs_path_->records) volumes[name] = VfsVolumeInfo(name, record);
  return volumes;
}

std::string FakeConvoyDaemon::Mount(const MountRequest& request) {
  Arrive(kMountRequest);
  const std::string& name = request.volume_name;
  CheckName(kMountRequest, name);
  MountRequest asked = request;
  if (api == Api::kStock || !request.extensions) {
    asked.read_write.clear();
    asked.fs_type.clear();
    asked.bind_mount.clear();
    asked.remount = false;
  }
  if (auto it = ebs_records.find(name); it != ebs_records.end())
    return MountEbs(kMountRequest, name, asked, it->second);
  if (auto it = vfs_path_->records.find(name); it != vfs_path_->records.end())
    return MountVfs(kMountRequest, name, asked, it->second);
  Refuse(kMountRequest, 400, "volume " + name + " doesn't exist");
}

std::string FakeConvoyDaemon::MountEbs(const std::string& request, const std::string& name,
                                       const MountRequest& mount, EbsRecord& record) {
  const std::string target =
      mount.mount_point.empty() ? std::string(kEbsDefaultMounts) + "/" + name : mount.mount_point;
  if (!record.mount_point.empty() && MountedHere(request, record.mount_point)) {
    if (record.mount_point == target) return target;
    Refuse(request, 400,
           "Volume " + name + " was already mounted at " + record.mount_point +
               ", but asked to mount at " + target);
  }
  // v0.5.2 passes no mount options (ReadWrite is an extension).
  MountHere(request, record.device, target, cloud_->volumes.at(record.volume_id).filesystem,
            mount.read_write == "ro" ? MS_RDONLY : 0);
  record.mount_point = target;
  return target;
}

std::string FakeConvoyDaemon::MountVfs(const std::string& request, const std::string& name,
                                       const MountRequest& mount, SharedVfsPath::Record& record) {
  if (mount.bind_mount.empty()) {
    // v0.5.2 mounts nothing: it records and answers the volume's directory.
    if (!mount.mount_point.empty())
      Refuse(request, 400, "VFS doesn't support specified mount point");
    return record.mount_point = record.path;
  }
  // PR #161: bind the directory at the caller's mount point; a previous
  // bind mount still mounted on this host moves only with ReMount.
  const std::string& target = mount.mount_point;
  const std::string previous = record.mount_point;
  if (previous == target && MountedHere(request, target)) return target;
  if (!previous.empty() && previous != record.path && previous != target &&
      MountedHere(request, previous)) {
    if (!mount.remount) {
      Refuse(request, 400,
             "Volume " + name + " was already mounted at " + previous + ", but asked to mount at " +
                 target);
    }
    UnmountHere(request, previous);
  }
  MountHere(request, record.path, target, "", MS_BIND);
  if (mount.read_write == "ro")
    MountHere(request, "", target, "", MS_REMOUNT | MS_BIND | MS_RDONLY);
  return record.mount_point = target;
}

void FakeConvoyDaemon::Umount(const std::string& name) {
  Arrive(kUmountRequest);
  CheckName(kUmountRequest, name);
  if (auto it = ebs_records.find(name); it != ebs_records.end()) {
    EbsRecord& record = it->second;
    if (!record.mount_point.empty() && MountedHere(kUmountRequest, record.mount_point))
      UnmountHere(kUmountRequest, record.mount_point);
    record.mount_point.clear();
    return;
  }
  auto it = vfs_path_->records.find(name);
  if (it == vfs_path_->records.end())
    Refuse(kUmountRequest, 400, "volume " + name + " doesn't exist");
  // Only a bind mount (PR #161) is a mount; v0.5.2's mark is just cleared.
  SharedVfsPath::Record& record = it->second;
  if (!record.mount_point.empty() && record.mount_point != record.path &&
      MountedHere(kUmountRequest, record.mount_point)) {
    UnmountHere(kUmountRequest, record.mount_point);
  }
  record.mount_point.clear();
}

bool FakeConvoyDaemon::Delete(const std::string& name, bool reference_only) {
  Arrive(kDeleteRequest);
  CheckName(kDeleteRequest, name);
  if (auto it = ebs_records.find(name); it != ebs_records.end()) {
    // Detached from this instance first (mounted or not, as v0.5.2); the
    // disk and its data stay unless the whole volume is deleted.
    EbsCloud::Volume& disk = cloud_->volumes.at(it->second.volume_id);
    if (disk.instance == instance_id_) {
      disk.instance.clear();
      disk.device.clear();
    }
    if (!reference_only) cloud_->volumes.erase(it->second.volume_id);
    ebs_records.erase(it);
    return true;
  }
  auto it = vfs_path_->records.find(name);
  if (it == vfs_path_->records.end()) return false;  // 404 "Volume not found."
  if (!it->second.mount_point.empty())
    Refuse(kDeleteRequest, 400, "Cannot delete volume " + name + ". It is still mounted");
  vfs_path_->records.erase(it);
  return true;
}

ApiProbe FakeConvoyDaemon::ProbeApi() {
  Arrive(kProbeRequest);
  ++probes_received;
  // Stock ignores the unknown ReadWrite key and looks for volume "";
  // with the extensions Go refuses a number for the ReadWrite string.
  ApiProbe probe;
  std::string answer = unfamiliar_probe_answer;
  if (answer.empty() && api == Api::kStock) {
    answer = "volume  doesn't exist";
    probe.kind = ApiProbe::Kind::kStock;
  } else if (answer.empty()) {
    answer =
        "json: cannot unmarshal number into Go struct field VolumeMountRequest.ReadWrite of type "
        "string";
    probe.kind = ApiProbe::Kind::kExtended;
  }
  probe.evidence = Endpoint() + ": " + kProbeRequest + " answered 400 " + answer;
  return probe;
}

FakeConvoyDaemon& FakeConvoyDaemons::Start(const std::string& socket,
                                           const std::string& instance_id,
                                           flexvolume::FakeMounter* host_mounts, Api api) {
  auto& slot = daemons_[socket];
  slot =
      std::make_unique<FakeConvoyDaemon>(socket, instance_id, &vfs_path, &cloud, host_mounts, api);
  return *slot;
}

std::unique_ptr<ConvoyClient> FakeConvoyDaemons::ForSocket(const std::string& socket) {
  requested.push_back(socket);
  return std::make_unique<BorrowedClient>(&At(socket));
}

}  // namespace convoy_flexvolume
