#include "fakes/convoy/ebs_driver.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "fakes/common/files.h"
#include "fakes/convoy/driver_common.h"
#include "fakes/convoy/names.h"
#include "platform/read_file.h"
#include "platform/run_command.h"

namespace flexkit::fakes::convoy {
namespace {

constexpr std::string_view kEbsRecordPrefix = "ebs_volume_";
constexpr std::string_view kEbsRecordSuffix = ".json";
constexpr std::string_view kBackupScheme = "ebs://";
constexpr int64_t kGiB = 1LL << 30;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const nlohmann::json* AttachmentOf(const nlohmann::json& volume) {
  const auto& list = volume["Attachments"];
  return list.empty() ? nullptr : &list[0];
}

}  // namespace

EbsDriver::EbsDriver(EbsConfig config, Mounter& mounter)
    : config_(std::move(config)), mounter_(mounter), cloud_(config_.cloud_socket) {
  MakeDirs(config_.root, 0700);
  MakeDirs(config_.dev_dir, 0755);
  try {
    nlohmann::json instance =
        Call("DescribeInstances", {{"InstanceIds", {config_.instance_id}}})["Instances"][0];
    zone_ = instance["AvailabilityZone"];
    // An EC2 zone is its region plus one letter (us-east-1a is in us-east-1).
    region_ = zone_.substr(0, zone_.find_last_not_of("abcdefghijklmnopqrstuvwxyz") + 1);
  } catch (const std::exception& e) {
    throw std::runtime_error("start ebs driver for instance " + config_.instance_id + " on cloud " +
                             config_.cloud_socket + ": " + e.what());
  }
  Reconcile();
}

nlohmann::json EbsDriver::Call(const std::string& op, const nlohmann::json& body) const {
  try {
    return cloud_.Call(op, body);
  } catch (const CloudError& e) {
    if (e.code == "Unreachable") throw ConvoyError(e.what());
    throw;
  }
}

InfoMap EbsDriver::Info() const {
  return {{"DefaultVolumeSize", std::to_string(config_.default_volume_size)},
          {"DefaultVolumeType", config_.default_volume_type},
          {"DefaultKmsKey", ""},
          {"DefaultEncrypted", "false"},
          {"InstanceID", config_.instance_id},
          {"Region", region_},
          {"AvailiablityZone", zone_}};
}

std::string EbsDriver::RecordFile(const std::string& name) const {
  return config_.root + "/" + std::string(kEbsRecordPrefix) + name + std::string(kEbsRecordSuffix);
}

std::optional<EbsDriver::Record> EbsDriver::Load(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  if (EscapesDirectory(config_.root, name) || name.find('/') != std::string::npos) {
    throw ConvoyError("Invalid name " + name);
  }
  struct stat st {};
  std::string file = RecordFile(name);
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  return ReadRecord(file, [&] {
    auto j = nlohmann::json::parse(platform::ReadWholeFile(file));
    Record r;
    r.name = j.value("Name", "");
    r.ebs_id = j.value("EBSID", "");
    r.device = j.value("Device", "");
    r.loop_device = j.value("LoopDevice", "");
    r.mount_point = j.value("MountPoint", "");
    r.fs_type = j.value("FSType", "");
    r.read_write = j.value("ReadWrite", "");
    r.created_time = j.value("CreatedTime", "");
    r.pre_exist = j.value("PreExist", false);
    r.attached = j.value("Attached", false);
    nlohmann::json snapshots = j.value("Snapshots", nlohmann::json::object());
    for (const auto& [snapshot, sj] : snapshots.items()) {
      r.snapshots[snapshot] = {snapshot, sj.value("EBSID", ""), sj.value("CreatedTime", "")};
    }
    return r;
  });
}

EbsDriver::Record EbsDriver::LoadExisting(const std::string& name) const {
  auto r = Load(name);
  if (!r) throw NoSuchVolume(name);
  return *r;
}

void EbsDriver::Save(const Record& r) const {
  // Convoy's record keeps {Name, VolumeName, EBSID} per snapshot.
  nlohmann::ordered_json snapshots = nlohmann::ordered_json::object();
  for (const auto& [name, s] : r.snapshots) {
    snapshots[name] = {{"Name", s.name},
                       {"VolumeName", r.name},
                       {"EBSID", s.ebs_id},
                       {"CreatedTime", s.created_time}};
  }
  nlohmann::ordered_json j = {{"Name", r.name},
                              {"EBSID", r.ebs_id},
                              {"Device", r.device},
                              {"LoopDevice", r.loop_device},
                              {"MountPoint", r.mount_point},
                              {"FSType", r.fs_type},
                              {"ReadWrite", r.read_write},
                              {"CreatedTime", r.created_time},
                              {"PreExist", r.pre_exist},
                              {"Attached", r.attached},
                              {"Snapshots", snapshots}};
  WriteFileAtomically(RecordFile(r.name), j.dump() + "\n");
}

nlohmann::json EbsDriver::Describe(const std::string& volume_id) const {
  int64_t deadline = NowMs() + config_.wait_timeout_ms;
  for (int64_t pause = 10;; pause = std::min<int64_t>(pause * 2, 500)) {
    try {
      return Call("DescribeVolumes", {{"VolumeIds", {volume_id}}})["Volumes"][0];
    } catch (const CloudError& e) {
      // Eventual consistency: a just-created volume may not be visible yet.
      if (e.code != "InvalidVolume.NotFound" || NowMs() > deadline)
        throw ConvoyError(AwsErrorText(e));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  }
}

nlohmann::json EbsDriver::WaitFor(const std::string& volume_id, const std::string& what,
                                  const std::function<bool(const nlohmann::json&)>& done,
                                  int64_t timeout_ms) const {
  int64_t deadline = NowMs() + timeout_ms;
  for (int64_t pause = 5;; pause = std::min<int64_t>(pause * 2, 200)) {
    nlohmann::json v = Describe(volume_id);
    if (done(v)) return v;
    if (NowMs() > deadline) {
      const nlohmann::json* a = AttachmentOf(v);
      throw ConvoyError("waiting for " + volume_id + " to be " + what + ": still '" +
                        v.value("State", "") + "'" +
                        (a ? " with attachment '" + (*a)["State"].get<std::string>() + "' on " +
                                 (*a)["InstanceId"].get<std::string>()
                           : ""));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  }
}

void EbsDriver::TakeOverFrom(const std::string& volume_id, const std::string& other) const {
  std::string state;
  try {
    state = Call("DescribeInstances", {{"InstanceIds", {other}}})["Instances"][0]["State"];
  } catch (const CloudError& e) {
    if (e.code != "InvalidInstanceID.NotFound") throw ConvoyError(AwsErrorText(e));
    state = "terminated";  // as PR #161: an unknown instance is not running
  }
  if (state == "running") {
    throw ConvoyError("can't re-use ebs volumeID: " + volume_id + " from instanceID: " + other +
                      ", instance is running");
  }
  spdlog::info("failover: detaching {} from {} instance {}", volume_id, state, other);
  auto detached_there = [&](const nlohmann::json& v) {
    const nlohmann::json* a = AttachmentOf(v);
    return a == nullptr || (*a)["InstanceId"] != other;
  };
  try {
    Call("DetachVolume", {{"VolumeId", volume_id}, {"InstanceId", other}});
    WaitFor(volume_id, "detached from " + other, detached_there, config_.busy_grace_ms);
  } catch (const std::exception& e) {
    spdlog::warn("failover: detach of {} from {} did not finish ({}); forcing", volume_id, other,
                 e.what());
    try {
      Call("DetachVolume", {{"VolumeId", volume_id}, {"InstanceId", other}, {"Force", true}});
    } catch (const CloudError& ce) {
      if (ce.code != "InvalidAttachment.NotFound" && ce.code != "IncorrectState") {
        throw ConvoyError(AwsErrorText(ce));
      }
    }
    WaitFor(volume_id, "detached from " + other, detached_there, config_.wait_timeout_ms);
  }
}

nlohmann::json EbsDriver::AttachHere(const std::string& volume_id) const {
  nlohmann::json v = Describe(volume_id);
  const nlohmann::json* a = AttachmentOf(v);
  if (a != nullptr && (*a)["InstanceId"] != config_.instance_id) {
    if (config_.stock) {
      // v0.5.2 has no detach-before-attach: the cloud refuses the attach.
      try {
        Call("AttachVolume", {{"VolumeId", volume_id}, {"InstanceId", config_.instance_id}});
      } catch (const CloudError& e) {
        throw ConvoyError(AwsErrorText(e));
      }
      throw ConvoyError("attaching " + volume_id + " attached to " +
                        (*a)["InstanceId"].get<std::string>() + " unexpectedly succeeded");
    }
    TakeOverFrom(volume_id, (*a)["InstanceId"]);
    v = Describe(volume_id);
    a = AttachmentOf(v);
  }
  if (a == nullptr) {
    v = WaitFor(
        volume_id, "available", [](const nlohmann::json& x) { return x["State"] == "available"; },
        config_.wait_timeout_ms);
    try {
      Call("AttachVolume", {{"VolumeId", volume_id}, {"InstanceId", config_.instance_id}});
    } catch (const CloudError& e) {
      throw ConvoyError(AwsErrorText(e));
    }
  }
  v = WaitFor(
      volume_id, "attached here",
      [&](const nlohmann::json& x) {
        const nlohmann::json* at = AttachmentOf(x);
        return at != nullptr && (*at)["State"] != "attaching";
      },
      config_.wait_timeout_ms);
  const nlohmann::json& attachment = *AttachmentOf(v);
  if (attachment["InstanceId"] != config_.instance_id || attachment["State"] != "attached") {
    throw ConvoyError("Cannot attach volume, final state " +
                      attachment["State"].get<std::string>());
  }
  return attachment;
}

void EbsDriver::DetachHere(const std::string& volume_id) const {
  try {
    Call("DetachVolume", {{"VolumeId", volume_id}, {"InstanceId", config_.instance_id}});
  } catch (const CloudError& e) {
    // Not attached here (any more): nothing of ours to detach, and another
    // instance's attachment is never ours to touch.
    if (e.code == "InvalidAttachment.NotFound" || e.code == "IncorrectState" ||
        e.code == "InvalidVolume.NotFound") {
      return;
    }
    throw ConvoyError(AwsErrorText(e));
  }
  WaitFor(
      volume_id, "detached from " + config_.instance_id,
      [&](const nlohmann::json& v) {
        const nlohmann::json* a = AttachmentOf(v);
        return a == nullptr || (*a)["InstanceId"] != config_.instance_id;
      },
      config_.wait_timeout_ms);
}

std::string EbsDriver::LinkDevice(const nlohmann::json& attachment) const {
  std::string host_device = attachment["HostDevice"];  // /dev/xvdf
  std::string link = config_.dev_dir + "/" + host_device.substr(5);
  std::string temp = link + ".tmp";
  ::unlink(temp.c_str());
  if (::symlink(attachment["LoopDevice"].get<std::string>().c_str(), temp.c_str()) != 0 ||
      ::rename(temp.c_str(), link.c_str()) != 0) {
    throw ConvoyError("link " + link + " to " + attachment["LoopDevice"].get<std::string>() + ": " +
                      GoErrno(errno));
  }
  return link;
}

void EbsDriver::Format(const std::string& device, const std::string& wanted,
                       bool blank_allowed) const {
  std::string found = mounter_.ProbeFilesystem(device);
  if (found.empty()) {
    if (!blank_allowed) return;
    spdlog::info("formatting {} as {}", device, wanted);
    try {
      if (wanted == "xfs") {
        platform::RunCommandOrThrow({"mkfs.xfs", "-f", "-q", device});
      } else {
        platform::RunCommandOrThrow({"mkfs.ext4", "-F", "-q", device});
      }
    } catch (const std::exception& e) {
      throw ConvoyError("format " + device + ": " + ReplyText(e));
    }
    return;
  }
  if (found != wanted) {
    throw ConvoyError("device " + device + " already has a " + found + " filesystem, not " +
                      wanted + "; refusing to reformat");
  }
}

void EbsDriver::Create(const CreateRequest& request) {
  if (Load(request.name)) throw ConvoyError("Volume " + request.name + " already exists");
  if (!request.backup_url.empty() && !request.driver_volume_id.empty()) {
    throw ConvoyError("Cannot create volume from both backup and existing volume");
  }
  std::string fs = request.fs_type.empty() ? "ext4" : request.fs_type;
  if (fs != "ext4" && fs != "xfs") throw ConvoyError("Invalid FSType " + fs + ": use ext4 or xfs");
  Record r;
  r.name = request.name;
  r.created_time = RubyDateNow();
  r.fs_type = fs;
  bool created_here = false;
  if (!request.driver_volume_id.empty()) {
    r.ebs_id = request.driver_volume_id;
    r.pre_exist = true;
  } else {
    std::string type = request.type.empty() ? config_.default_volume_type : request.type;
    if (type == "io1" && request.iops <= 0) throw ConvoyError("Invalid IOPS for volume type io1");
    if (type != "io1" && request.iops != 0)
      throw ConvoyError("IOPS only valid for volume type io1");
    nlohmann::json create = {{"VolumeType", type}, {"Iops", request.iops}};
    if (!request.backup_url.empty()) {
      // The snapshot's size unless asked for more (the cloud refuses less).
      std::string snapshot_id = ParseBackupUrl(request.backup_url).snapshot_id;
      WaitForSnapshot(snapshot_id);
      create["SnapshotId"] = snapshot_id;
      create["Size"] = (request.size + kGiB - 1) / kGiB;
    } else {
      int64_t size = request.size > 0 ? request.size : config_.default_volume_size;
      create["Size"] = (size + kGiB - 1) / kGiB;
    }
    try {
      r.ebs_id = Call("CreateVolume", create)["VolumeId"];
    } catch (const CloudError& e) {
      throw ConvoyError(AwsErrorText(e));
    }
    created_here = true;
  }
  try {
    nlohmann::json attachment = AttachHere(r.ebs_id);
    r.loop_device = attachment["LoopDevice"];
    r.device = LinkDevice(attachment);
    r.attached = true;
    // A blank device is formatted (unless its data comes from a backup); an
    // existing filesystem of another type is an error when the caller named
    // a type, and is used as it is otherwise.
    std::string found = mounter_.ProbeFilesystem(r.loop_device);
    if (!found.empty() && request.fs_type.empty()) r.fs_type = found;
    // v0.5.2 formats only the volumes it created, always as ext4.
    if (!config_.stock || created_here)
      Format(r.loop_device, r.fs_type, /*blank_allowed=*/request.backup_url.empty());
    Save(r);
  } catch (...) {
    // Leave nothing half-done: detach what we attached, delete what we made.
    spdlog::warn("create of {} ({}) failed; rolling back", r.name, r.ebs_id);
    try {
      DetachHere(r.ebs_id);
      if (created_here) Call("DeleteVolume", {{"VolumeId", r.ebs_id}});
    } catch (const std::exception& e) {
      spdlog::error("rollback of {}: {}", r.ebs_id, e.what());
    }
    throw;
  }
  spdlog::info("ebs volume {} is {} attached at {} ({})", r.name, r.ebs_id, r.device,
               r.loop_device);
}

std::string EbsDriver::Mount(const MountRequest& request) {
  Record r = LoadExisting(request.name);
  if (!request.bind_mount.empty())
    throw ConvoyError("BindMount is only supported by the vfs driver");
  CheckReadWrite(request.read_write);
  std::string target = request.mount_point.empty() ? config_.root + "/mounts/" + r.name
                                                   : CheckedMountPoint(request.mount_point);
  nlohmann::json v = Describe(r.ebs_id);
  const nlohmann::json* a = AttachmentOf(v);
  if (a == nullptr || (*a)["InstanceId"] != config_.instance_id || (*a)["State"] != "attached") {
    throw ConvoyError("volume " + r.name + " (" + r.ebs_id + ") is not attached to this instance " +
                      config_.instance_id);
  }
  if (!r.mount_point.empty() && mounter_.IsMountPoint(r.mount_point)) {
    if (r.mount_point == target) return target;
    if (!request.remount) throw AlreadyMounted(r.name, r.mount_point, target);
    mounter_.Unmount(r.mount_point);
  }
  AsConvoyError([&] {
    // v0.5.2 creates only its default mount point; PR #161 any.
    if (!config_.stock || request.mount_point.empty()) MakeDirs(target, 0755);
    MountOptions options;
    options.read_only = request.read_write == "ro";
    mounter_.Mount(r.loop_device, target, mounter_.ProbeFilesystem(r.loop_device), options);
  });
  r.mount_point = target;
  r.read_write = request.read_write;
  Save(r);
  return target;
}

void EbsDriver::Umount(const std::string& name) {
  Record r = LoadExisting(name);
  if (r.mount_point.empty()) return;
  AsConvoyError([&] {
    if (mounter_.IsMountPoint(r.mount_point)) mounter_.Unmount(r.mount_point);
  });
  if (r.mount_point == config_.root + "/mounts/" + r.name) ::rmdir(r.mount_point.c_str());
  r.mount_point.clear();
  Save(r);
}

void EbsDriver::Delete(const std::string& name, bool reference_only) {
  Record r = LoadExisting(name);
  DetachHere(r.ebs_id);
  if (!reference_only && !r.pre_exist) {
    try {
      Call("DeleteVolume", {{"VolumeId", r.ebs_id}});
    } catch (const CloudError& e) {
      if (e.code != "InvalidVolume.NotFound") throw ConvoyError(AwsErrorText(e));
    }
  }
  if (!r.device.empty()) {
    // Only our own link, and only if it still points at our loop device.
    char target[256] = {};
    ssize_t n = ::readlink(r.device.c_str(), target, sizeof target - 1);
    if (n > 0 && std::string(target, static_cast<size_t>(n)) == r.loop_device)
      ::unlink(r.device.c_str());
  }
  ::unlink(RecordFile(name).c_str());
}

std::string EbsDriver::MountPoint(const std::string& name) {
  return LoadExisting(name).mount_point;
}

InfoMap EbsDriver::InfoOf(const Record& r) const {
  InfoMap info = {{"Device", r.device},      {"MountPoint", r.mount_point},
                  {"EBSVolumeID", r.ebs_id}, {"KmsKeyId", ""},
                  {"VolumeName", r.name},    {"VolumeCreatedAt", r.created_time},
                  {"FSType", r.fs_type},     {"Attached", r.attached ? "true" : "false"}};
  if (config_.stock) {
    info.erase("FSType");
    info.erase("Attached");
  }
  try {
    nlohmann::json v = Call("DescribeVolumes", {{"VolumeIds", {r.ebs_id}}})["Volumes"][0];
    info["AvailiablityZone"] = v["AvailabilityZone"];
    info["Size"] = std::to_string(v["Size"].get<int64_t>() * kGiB);
    info["State"] = v["State"];
    info["Type"] = v["VolumeType"];
    info["IOPS"] = std::to_string(v["Iops"].get<int64_t>());
  } catch (const std::exception& e) {
    info["State"] = "unknown: " + ReplyText(e);
  }
  return info;
}

std::optional<InfoMap> EbsDriver::VolumeInfo(const std::string& name) {
  auto r = Load(name);
  if (!r) return std::nullopt;
  return InfoOf(*r);
}

std::map<std::string, std::shared_ptr<const VolumeListing>> EbsDriver::List() {
  std::map<std::string, std::shared_ptr<const VolumeListing>> out;
  DIR* dir = ::opendir(config_.root.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    auto name = VolumeOfRecordFile(e->d_name, kEbsRecordPrefix, kEbsRecordSuffix);
    if (!name) continue;
    if (auto r = Load(*name)) {
      auto listing = std::make_shared<VolumeListing>();
      listing->info = InfoOf(*r);
      listing->snapshots = Snapshots(*name);
      out[*name] = std::move(listing);
    }
  }
  ::closedir(dir);
  return out;
}

void EbsDriver::Reconcile() {
  for (const auto& [name, listing] : List()) {
    Record r = LoadExisting(name);
    nlohmann::json v;
    try {
      v = Describe(r.ebs_id);
    } catch (const std::exception& e) {
      spdlog::warn("reconcile {}: {}", name, e.what());
      r.attached = false;
      r.mount_point.clear();
      Save(r);
      continue;
    }
    const nlohmann::json* a = AttachmentOf(v);
    bool here =
        a != nullptr && (*a)["InstanceId"] == config_.instance_id && (*a)["State"] == "attached";
    if (!here) {
      // Not attached here any more (failed over, detached): never remount.
      spdlog::info("reconcile {}: {} is no longer attached to {}; not remounting", name, r.ebs_id,
                   config_.instance_id);
      r.attached = false;
      r.mount_point.clear();
      Save(r);
      continue;
    }
    r.attached = true;
    r.loop_device = (*a)["LoopDevice"];
    r.device = LinkDevice(*a);
    if (!r.mount_point.empty() && !mounter_.IsMountPoint(r.mount_point)) {
      try {
        MakeDirs(r.mount_point, 0755);
        MountOptions options;
        options.read_only = r.read_write == "ro";
        mounter_.Mount(r.loop_device, r.mount_point, mounter_.ProbeFilesystem(r.loop_device),
                       options);
        spdlog::info("reconcile {}: remounted at {}", name, r.mount_point);
      } catch (const std::exception& e) {
        spdlog::error("reconcile {}: remount at {}: {}", name, r.mount_point, e.what());
        r.mount_point.clear();
      }
    }
    Save(r);
  }
}

nlohmann::json EbsDriver::DescribeSnapshot(const std::string& snapshot_id) const {
  try {
    return Call("DescribeSnapshots", {{"SnapshotIds", {snapshot_id}}})["Snapshots"][0];
  } catch (const CloudError& e) {
    throw ConvoyError(AwsErrorText(e));
  }
}

nlohmann::json EbsDriver::WaitForSnapshot(const std::string& snapshot_id) const {
  int64_t deadline = NowMs() + config_.wait_timeout_ms;
  for (int64_t pause = 5;; pause = std::min<int64_t>(pause * 2, 200)) {
    nlohmann::json s = DescribeSnapshot(snapshot_id);
    std::string state = s["State"];
    if (state == "completed") return s;
    if (state != "pending") {
      throw ConvoyError("snapshot " + snapshot_id + " ended in state '" + state + "'");
    }
    if (NowMs() > deadline) {
      throw ConvoyError("waiting for snapshot " + snapshot_id + " to be completed: still '" +
                        state + "' after " + std::to_string(config_.wait_timeout_ms) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  }
}

EbsDriver::BackupLocation EbsDriver::ParseBackupUrl(const std::string& url) const {
  auto invalid = [&] {
    return ConvoyError("Invalid EBS backup URL " + url + ": expected ebs://<region>/snap-<id>");
  };
  if (!url.starts_with(kBackupScheme)) throw invalid();
  std::string rest = url.substr(kBackupScheme.size());
  auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) throw invalid();
  BackupLocation location{rest.substr(0, slash), rest.substr(slash + 1)};
  if (!location.snapshot_id.starts_with("snap-") ||
      location.snapshot_id.find('/') != std::string::npos) {
    throw invalid();
  }
  if (location.region != region_) {
    throw ConvoyError("Snapshot " + location.snapshot_id + " is at " + location.region +
                      " rather than current region " + region_ + ". Copy snapshot is needed");
  }
  return location;
}

std::string EbsDriver::BackupUrlOf(const std::string& snapshot_id) const {
  return std::string(kBackupScheme) + region_ + "/" + snapshot_id;
}

InfoMap EbsDriver::SnapshotInfoOf(const Record& r, const SnapshotRecord& s,
                                  const nlohmann::json* described) const {
  InfoMap info = {
      {"SnapshotName", s.name},    {"VolumeName", r.name},    {"SnapshotCreatedAt", s.created_time},
      {"EBSSnapshotID", s.ebs_id}, {"EBSVolumeID", r.ebs_id}, {"KmsKeyId", ""}};
  if (described == nullptr) {
    info["State"] = "removed";  // the EBS snapshot was deleted (a backup delete)
    return info;
  }
  info["State"] = (*described)["State"];
  info["StartTime"] = (*described)["StartTime"];
  info["Size"] = std::to_string((*described)["VolumeSize"].get<int64_t>() * kGiB);
  return info;
}

InfoMap EbsDriver::BackupInfoOf(const std::string& url, const nlohmann::json& snapshot) {
  const nlohmann::json& tags = snapshot["Tags"];
  return {{"BackupURL", url},
          {"DriverName", "ebs"},
          {"EBSSnapshotID", snapshot["SnapshotId"]},
          {"EBSVolumeID", snapshot["VolumeId"]},
          {"Size", std::to_string(snapshot["VolumeSize"].get<int64_t>() * kGiB)},
          {"State", snapshot["State"]},
          {"StartTime", snapshot["StartTime"]},
          {"VolumeName", tags.value("ConvoyVolumeName", "")},
          {"SnapshotName", tags.value("ConvoySnapshotName", "")}};
}

std::map<std::string, InfoMap> EbsDriver::Snapshots(const std::string& volume) {
  Record r = LoadExisting(volume);
  std::map<std::string, InfoMap> out;
  if (r.snapshots.empty()) return out;
  // One call for all of the volume's snapshots; one that is missing was deleted.
  std::map<std::string, nlohmann::json> described;
  try {
    nlohmann::json answer = Call("DescribeSnapshots", {{"VolumeId", r.ebs_id}});
    for (const auto& s : answer["Snapshots"]) described[s["SnapshotId"]] = s;
  } catch (const std::exception& e) {
    // As for a volume's info: a listing still shows what the record knows.
    for (const auto& [name, s] : r.snapshots) {
      InfoMap info = SnapshotInfoOf(r, s, nullptr);
      info["State"] = "unknown: " + ReplyText(e);
      out[name] = std::move(info);
    }
    return out;
  }
  for (const auto& [name, s] : r.snapshots) {
    auto it = described.find(s.ebs_id);
    out[name] = SnapshotInfoOf(r, s, it == described.end() ? nullptr : &it->second);
  }
  return out;
}

void EbsDriver::CreateSnapshot(const std::string& snapshot, const std::string& volume) {
  Record r = LoadExisting(volume);
  if (!r.mount_point.empty() && mounter_.IsMountPoint(r.mount_point)) {
    // As Convoy runs `sync`: what the host wrote is in the snapshot.
    int fd = ::open(r.mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || ::syncfs(fd) != 0) {
      int err = errno;
      if (fd >= 0) ::close(fd);
      throw ConvoyError("sync " + r.mount_point + ": " + GoErrno(err));
    }
    ::close(fd);
  }
  nlohmann::json created;
  try {
    created = Call("CreateSnapshot",
                   {{"VolumeId", r.ebs_id},
                    {"Description", "Convoy snapshot"},
                    {"Tags", {{"ConvoyVolumeName", volume}, {"ConvoySnapshotName", snapshot}}}});
  } catch (const CloudError& e) {
    throw ConvoyError(AwsErrorText(e));
  }
  r.snapshots[snapshot] = {snapshot, created["SnapshotId"], RubyDateNow()};
  Save(r);
  spdlog::info("snapshot {} of {} is {}", snapshot, volume, r.snapshots[snapshot].ebs_id);
}

void EbsDriver::DeleteSnapshot(const std::string& snapshot, const std::string& volume) {
  Record r = LoadExisting(volume);
  // Only Convoy's reference goes: the EBS snapshot stays (a backup may be it).
  if (r.snapshots.erase(snapshot) == 0) throw NoSuchSnapshot(snapshot, volume);
  Save(r);
}

std::optional<InfoMap> EbsDriver::SnapshotInfo(const std::string& snapshot,
                                               const std::string& volume) {
  Record r = LoadExisting(volume);
  if (!r.snapshots.count(snapshot)) return std::nullopt;
  return Snapshots(volume)[snapshot];
}

std::string EbsDriver::CreateBackup(const std::string& snapshot, const std::string& volume,
                                    const std::string&, const std::string&) {
  Record r = LoadExisting(volume);
  auto it = r.snapshots.find(snapshot);
  if (it == r.snapshots.end()) throw NoSuchSnapshot(snapshot, volume);
  WaitForSnapshot(it->second.ebs_id);
  return BackupUrlOf(it->second.ebs_id);
}

std::map<std::string, InfoMap> EbsDriver::ListBackups(const std::string&,
                                                      const std::string& volume_filter) {
  // This host's snapshots, as Convoy's ebs driver lists them.
  std::map<std::string, InfoMap> out;
  for (const auto& [name, listing] : List()) {
    if (!volume_filter.empty() && name != volume_filter) continue;
    for (const auto& [snapshot, info] : listing->snapshots) {
      if (info.at("State") == "removed") continue;
      std::string url = BackupUrlOf(info.at("EBSSnapshotID"));
      out[url] = BackupInfoOf(url, DescribeSnapshot(info.at("EBSSnapshotID")));
    }
  }
  return out;
}

InfoMap EbsDriver::InspectBackup(const std::string& backup_url) {
  BackupLocation location = ParseBackupUrl(backup_url);
  return BackupInfoOf(BackupUrlOf(location.snapshot_id), DescribeSnapshot(location.snapshot_id));
}

void EbsDriver::DeleteBackup(const std::string& backup_url) {
  BackupLocation location = ParseBackupUrl(backup_url);
  try {
    Call("DeleteSnapshot", {{"SnapshotId", location.snapshot_id}});
  } catch (const CloudError& e) {
    throw ConvoyError(AwsErrorText(e));
  }
}

}  // namespace flexkit::fakes::convoy
