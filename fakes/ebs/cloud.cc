#include "fakes/ebs/cloud.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>

#include "fakes/common/files.h"
#include "platform/read_file.h"

namespace flexkit::fakes::ebs {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const std::vector<std::string> kDeviceNames = {"/dev/sdf", "/dev/sdg", "/dev/sdh", "/dev/sdi",
                                               "/dev/sdj", "/dev/sdk", "/dev/sdl", "/dev/sdm",
                                               "/dev/sdn", "/dev/sdo", "/dev/sdp"};
const std::set<std::string> kVolumeTypes = {"gp2", "io1", "standard", "st1", "sc1"};

Ec2Error VolumeNotFound(const std::string& id) {
  return Ec2Error("InvalidVolume.NotFound", "The volume '" + id + "' does not exist.");
}

Ec2Error InstanceNotFound(const std::string& id) {
  return Ec2Error("InvalidInstanceID.NotFound", "The instance ID '" + id + "' does not exist");
}

Ec2Error NotAttached(const std::string& volume, const std::string& instance) {
  return Ec2Error("InvalidAttachment.NotFound", "Volume " + volume + " can not be detached from " +
                                                    instance + " because it is not attached");
}

// EC2's StartTime: UTC, ISO 8601 with milliseconds.
std::string Iso8601Now() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms));
  return out;
}

std::string Lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const std::vector<std::string>& Ec2Operations() {
  static const std::vector<std::string> operations = {
      "AttachVolume",      "CreateSnapshot",    "CreateVolume",    "DeleteSnapshot", "DeleteVolume",
      "DescribeInstances", "DescribeSnapshots", "DescribeVolumes", "DetachVolume"};
  return operations;
}

Cloud::Cloud(CloudConfig config, Clock& clock, LoopDevices& loops)
    : config_(std::move(config)), clock_(clock), loops_(loops), rng_(std::random_device{}()) {
  MakeDirs(config_.state_dir + "/volumes", 0700);
  MakeDirs(config_.state_dir + "/snapshots", 0700);
  std::lock_guard lock(mutex_);
  LoadLocked();
  ReconcileLocked();
  CommitLocked();
}

std::string Cloud::NewId(const std::string& prefix) {
  static const char* kHex = "0123456789abcdef";
  std::string id = prefix + "-";
  for (int i = 0; i < 17; ++i) id.push_back(kHex[rng_() % 16]);
  return id;
}

std::string Cloud::VolumeFile(const std::string& id) const {
  return config_.state_dir + "/volumes/" + id + ".img";
}

std::string Cloud::SnapshotFile(const std::string& id) const {
  return config_.state_dir + "/snapshots/" + id + ".img";
}

Cloud::Volume& Cloud::FindVolumeLocked(const std::string& id) {
  auto it = volumes_.find(id);
  if (it == volumes_.end()) throw VolumeNotFound(id);
  return it->second;
}

Cloud::Snapshot& Cloud::FindSnapshotLocked(const std::string& id) {
  auto it = snapshots_.find(id);
  if (it == snapshots_.end()) {
    throw Ec2Error("InvalidSnapshot.NotFound", "The snapshot '" + id + "' does not exist.");
  }
  return it->second;
}

Cloud::Instance* Cloud::FindInstanceLocked(const std::string& id) {
  auto it = instances_.find(id);
  return it == instances_.end() ? nullptr : &it->second;
}

std::vector<Cloud::Attachment>::iterator Cloud::AttachmentOfLocked(const std::string& volume) {
  return std::find_if(attachments_.begin(), attachments_.end(),
                      [&](const Attachment& a) { return a.volume == volume; });
}

nlohmann::json Cloud::AttachmentJson(const Attachment& a) {
  std::string xvd = "/dev/xvd" + a.device.substr(7);  // what the instance sees
  return {{"VolumeId", a.volume}, {"InstanceId", a.instance}, {"Device", a.device},
          {"HostDevice", xvd},    {"State", a.state},         {"LoopDevice", a.loop_device}};
}

nlohmann::json Cloud::InstanceJson(const Instance& i) {
  return {{"InstanceId", i.id}, {"Host", i.host}, {"State", i.state}, {"AvailabilityZone", i.zone}};
}

nlohmann::json Cloud::SnapshotJson(const Snapshot& s) {
  return {{"SnapshotId", s.id},
          {"VolumeId", s.volume},
          {"VolumeSize", s.size_gib},
          {"State", s.state},
          {"Progress", s.state == "completed" ? "100%" : "0%"},
          {"StartTime", s.start_time},
          {"Description", s.description},
          {"Tags", s.tags}};
}

nlohmann::json Cloud::VolumeJsonLocked(const Volume& v) const {
  nlohmann::json attachments = nlohmann::json::array();
  for (const auto& a : attachments_) {
    if (a.volume == v.id) attachments.push_back(AttachmentJson(a));
  }
  return {{"VolumeId", v.id},         {"Size", v.size_gib},         {"VolumeType", v.type},
          {"Iops", v.iops},           {"AvailabilityZone", v.zone}, {"State", v.state},
          {"SnapshotId", v.snapshot}, {"Attachments", attachments}};
}

nlohmann::json Cloud::CreateVolume(int64_t size_gib, const std::string& type, int64_t iops,
                                   const std::string& zone, bool stuck,
                                   const std::string& snapshot) {
  std::string t = type.empty() ? "gp2" : type;
  if (!kVolumeTypes.count(t)) {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + t + ") for parameter volumeType is invalid.");
  }
  if (t == "io1" && iops <= 0) {
    throw Ec2Error("InvalidParameterDependency",
                   "The parameter iops must be specified for io1 volumes.");
  }
  if (t != "io1" && iops != 0) {
    throw Ec2Error("InvalidParameterDependency",
                   "Parameter iops is not supported for " + t + " volumes.");
  }
  std::string z = zone.empty() ? config_.availability_zone : zone;
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  if (!snapshot.empty()) {
    const Snapshot& source = FindSnapshotLocked(snapshot);
    if (source.state != "completed") {
      throw Ec2Error("IncorrectState",
                     "The snapshot '" + snapshot + "' is in the '" + source.state + "' state.");
    }
    if (size_gib == 0) size_gib = source.size_gib;
    if (size_gib < source.size_gib) {
      throw Ec2Error("InvalidParameterValue",
                     "Volume of " + std::to_string(size_gib) + "GiB is smaller than snapshot '" +
                         snapshot + "', expect size >= " + std::to_string(source.size_gib) + "GiB");
    }
  }
  if (size_gib < 1 || size_gib > 16384) {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + std::to_string(size_gib) + ") for parameter size is invalid.");
  }
  Volume v;
  v.id = NewId("vol");
  v.type = t;
  v.zone = z;
  v.snapshot = snapshot;
  v.size_gib = size_gib;
  v.iops = iops;
  v.state = "creating";
  int64_t now = clock_.NowMs();
  v.visible_at_ms = now + config_.consistency_delay_ms;
  v.ready_at_ms = now + config_.transition_delay_ms;
  v.stuck = stuck;
  std::string file = VolumeFile(v.id);
  if (!snapshot.empty()) {
    try {
      CopySparseFile(SnapshotFile(snapshot), file, size_gib * kGiB);
    } catch (const std::exception& e) {
      throw Ec2Error("InternalError", "restore " + snapshot + ": " + ReplyText(e));
    }
  } else {
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, size_gib * kGiB) != 0) {
      int err = errno;
      if (fd >= 0) ::close(fd);
      ::unlink(file.c_str());
      throw Ec2Error("InternalError", "create sparse file " + file + ": " + std::strerror(err));
    }
    ::close(fd);
  }
  volumes_[v.id] = v;
  AdvanceLocked();
  CommitLocked();
  spdlog::info("CreateVolume {} ({} GiB {}) in {}{}", v.id, size_gib, t, z,
               snapshot.empty() ? "" : " from " + snapshot);
  return VolumeJsonLocked(volumes_[v.id]);
}

nlohmann::json Cloud::DescribeVolumes(const std::vector<std::string>& ids,
                                      const std::string& attached_to) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  int64_t now = clock_.NowMs();
  nlohmann::json out = nlohmann::json::array();
  if (!ids.empty()) {
    for (const auto& id : ids) {
      Volume& v = FindVolumeLocked(id);
      if (v.visible_at_ms > now) throw VolumeNotFound(id);
      out.push_back(VolumeJsonLocked(v));
    }
    return out;
  }
  for (const auto& [id, v] : volumes_) {
    if (v.visible_at_ms > now) continue;
    if (!attached_to.empty()) {
      auto a = AttachmentOfLocked(id);
      if (a == attachments_.end() || a->instance != attached_to) continue;
    }
    out.push_back(VolumeJsonLocked(v));
  }
  return out;
}

nlohmann::json Cloud::AttachVolume(const std::string& volume, const std::string& instance,
                                   const std::string& device, bool stuck) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  Volume& v = FindVolumeLocked(volume);
  Instance* inst = FindInstanceLocked(instance);
  if (inst == nullptr || inst->state == "terminated") throw InstanceNotFound(instance);
  if (AttachmentOfLocked(volume) != attachments_.end()) {
    throw Ec2Error("VolumeInUse", volume + " is already attached to an instance");
  }
  if (v.state != "available") throw Ec2Error("IncorrectState", volume + " is not 'available'.");
  if (v.zone != inst->zone) {
    throw Ec2Error("InvalidVolume.ZoneMismatch",
                   "The volume '" + volume +
                       "' is not in the same availability zone as instance '" + instance + "'");
  }
  std::set<std::string> used;
  for (const auto& a : attachments_) {
    if (a.instance == instance) used.insert(a.device);
  }
  std::string chosen = device;
  if (!chosen.empty()) {
    if (std::find(kDeviceNames.begin(), kDeviceNames.end(), chosen) == kDeviceNames.end()) {
      throw Ec2Error("InvalidParameterValue", "Value (" + chosen +
                                                  ") for parameter device is invalid. " + chosen +
                                                  " is not a valid EBS device name.");
    }
    if (used.count(chosen)) {
      throw Ec2Error("InvalidParameterValue", "Attachment point " + chosen + " is already in use");
    }
  } else {
    for (const auto& name : kDeviceNames) {
      if (!used.count(name)) {
        chosen = name;
        break;
      }
    }
    if (chosen.empty()) {
      throw Ec2Error(
          "AttachmentLimitExceeded",
          "Instance " + instance + " already has the maximum of 11 EBS volumes attached");
    }
  }
  Attachment a;
  a.volume = volume;
  a.instance = instance;
  a.device = chosen;
  a.state = "attaching";
  a.ready_at_ms = clock_.NowMs() + config_.transition_delay_ms;
  a.stuck = stuck;
  try {
    a.loop_device = loops_.Attach(VolumeFile(volume));
  } catch (const std::exception& e) {
    throw Ec2Error("InternalError", "attach " + volume + ": " + ReplyText(e));
  }
  attachments_.push_back(a);
  v.state = "in-use";
  AdvanceLocked();
  CommitLocked();
  spdlog::info("AttachVolume {} to {} as {} ({})", volume, instance, chosen, a.loop_device);
  return AttachmentJson(*AttachmentOfLocked(volume));
}

nlohmann::json Cloud::DetachVolume(const std::string& volume, const std::string& instance,
                                   bool force, bool stuck) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  Volume& v = FindVolumeLocked(volume);
  auto a = AttachmentOfLocked(volume);
  if (a == attachments_.end()) {
    if (!instance.empty()) throw NotAttached(volume, instance);
    throw Ec2Error("IncorrectState", "Volume '" + volume + "' is in the '" + v.state + "' state.");
  }
  if (!instance.empty() && a->instance != instance) {
    // Never touch another instance's attachment: a late detach from an old host.
    throw NotAttached(volume, instance);
  }
  if (a->state == "attaching" || a->state == "attached") {
    a->state = "detaching";
    a->ready_at_ms = clock_.NowMs() + config_.transition_delay_ms;
    a->stuck = stuck;
  }
  a->force = a->force || force;
  if (force) a->stuck = false;
  std::string detached_from = a->instance;
  nlohmann::json out = AttachmentJson(*a);
  AdvanceLocked();
  CommitLocked();
  spdlog::info("DetachVolume {} from {}{}", volume, detached_from, force ? " (forced)" : "");
  return out;
}

void Cloud::DeleteVolume(const std::string& volume) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  Volume& v = FindVolumeLocked(volume);
  auto a = AttachmentOfLocked(volume);
  if (a != attachments_.end()) {
    throw Ec2Error("VolumeInUse", "Volume " + volume + " is currently attached to " + a->instance);
  }
  if (v.state != "available") {
    throw Ec2Error("IncorrectState",
                   "The volume '" + volume + "' is in the '" + v.state + "' state.");
  }
  v.state = "deleting";
  v.ready_at_ms = clock_.NowMs() + config_.transition_delay_ms;
  AdvanceLocked();
  CommitLocked();
  spdlog::info("DeleteVolume {}", volume);
}

nlohmann::json Cloud::DescribeInstances(const std::vector<std::string>& ids) {
  std::lock_guard lock(mutex_);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, inst] : instances_) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    out.push_back(InstanceJson(inst));
  }
  for (const auto& id : ids) {
    if (!instances_.count(id)) throw InstanceNotFound(id);
  }
  return out;
}

nlohmann::json Cloud::CreateSnapshot(const std::string& volume, const std::string& description,
                                     const std::map<std::string, std::string>& tags, bool stuck) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  Volume& v = FindVolumeLocked(volume);
  if (v.state != "available" && v.state != "in-use") {
    throw Ec2Error("IncorrectState",
                   "The volume '" + volume + "' is in the '" + v.state + "' state.");
  }
  Snapshot s;
  s.id = NewId("snap");
  s.volume = volume;
  s.state = "pending";
  s.description = description;
  s.start_time = Iso8601Now();
  s.tags = tags;
  s.size_gib = v.size_gib;
  s.ready_at_ms = clock_.NowMs() + config_.snapshot_delay_ms;
  s.stuck = stuck;
  // The data is what the volume holds now, as with EC2's point-in-time
  // snapshots; `pending` only says when it may be used.
  try {
    CopySparseFile(VolumeFile(volume), SnapshotFile(s.id), v.size_gib * kGiB);
  } catch (const std::exception& e) {
    throw Ec2Error("InternalError", "snapshot " + volume + ": " + ReplyText(e));
  }
  snapshots_[s.id] = s;
  AdvanceLocked();
  CommitLocked();
  spdlog::info("CreateSnapshot {} of {}", s.id, volume);
  return SnapshotJson(snapshots_[s.id]);
}

nlohmann::json Cloud::DescribeSnapshots(const std::vector<std::string>& ids,
                                        const std::string& of_volume) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  nlohmann::json out = nlohmann::json::array();
  if (!ids.empty()) {
    for (const auto& id : ids) out.push_back(SnapshotJson(FindSnapshotLocked(id)));
    return out;
  }
  for (const auto& [id, s] : snapshots_) {
    if (of_volume.empty() || s.volume == of_volume) out.push_back(SnapshotJson(s));
  }
  return out;
}

void Cloud::DeleteSnapshot(const std::string& snapshot) {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  FindSnapshotLocked(snapshot);
  snapshots_.erase(snapshot);
  CommitLocked();  // forget it first: a leftover file is swept on restart
  ::unlink(SnapshotFile(snapshot).c_str());
  spdlog::info("DeleteSnapshot {}", snapshot);
}

nlohmann::json Cloud::RunInstance(const std::string& host) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, inst] : instances_) {
    if (inst.host == host && inst.state != "terminated") {
      return {{"InstanceId", id}, {"Host", host}, {"State", inst.state}};
    }
  }
  Instance inst{NewId("i"), host, "running", config_.availability_zone};
  instances_[inst.id] = inst;
  CommitLocked();
  spdlog::info("RunInstance {} for host {}", inst.id, host);
  return {{"InstanceId", inst.id}, {"Host", host}, {"State", inst.state}};
}

void Cloud::SetInstanceState(const std::string& instance, const std::string& state) {
  if (state != "running" && state != "stopped" && state != "terminated") {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + state + ") for parameter state is invalid.");
  }
  std::lock_guard lock(mutex_);
  Instance* inst = FindInstanceLocked(instance);
  if (inst == nullptr) throw InstanceNotFound(instance);
  if (inst->state == "terminated" && state != "terminated") {
    throw Ec2Error("IncorrectInstanceState", "The instance '" + instance + "' is terminated.");
  }
  inst->state = state;
  if (state == "terminated") {
    // EC2 detaches a terminated instance's EBS volumes.
    for (auto& a : attachments_) {
      if (a.instance == instance) {
        a.state = "detaching";
        a.force = true;
        a.stuck = false;
        a.ready_at_ms = clock_.NowMs();
      }
    }
  }
  AdvanceLocked();
  CommitLocked();
  spdlog::info("instance {} is now {}", instance, state);
}

nlohmann::json Cloud::State() {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
  nlohmann::json volumes = nlohmann::json::array(), instances = nlohmann::json::array(),
                 snapshots = nlohmann::json::array();
  for (const auto& [id, v] : volumes_) volumes.push_back(VolumeJsonLocked(v));
  for (const auto& [id, i] : instances_) instances.push_back(InstanceJson(i));
  for (const auto& [id, snap] : snapshots_) snapshots.push_back(SnapshotJson(snap));
  nlohmann::json faults = nlohmann::json::object();
  for (const auto& [op, f] : faults_) {
    faults[op] = {{"LatencyMs", f.latency_ms}, {"ErrorCode", f.error_code},
                  {"ErrorRate", f.error_rate}, {"Count", f.count},
                  {"Stuck", f.stuck},          {"DropConnection", f.drop_connection}};
  }
  return {{"Volumes", volumes},
          {"Instances", instances},
          {"Snapshots", snapshots},
          {"Faults", faults},
          {"Violations", violations_}};
}

std::vector<std::string> Cloud::Violations() {
  std::lock_guard lock(mutex_);
  return violations_;
}

void Cloud::SetFault(const std::string& operation, const Fault& fault) {
  const auto& operations = Ec2Operations();
  if (std::find(operations.begin(), operations.end(), operation) == operations.end()) {
    std::string valid, hint;
    for (const auto& op : operations) {
      valid += (valid.empty() ? "" : ", ") + op;
      if (Lowercase(op) == Lowercase(operation)) hint = " (names are case-sensitive: " + op + ")";
    }
    throw Ec2Error("InvalidParameterValue", "Value (" + operation +
                                                ") for parameter Operation is invalid: no such EC2 "
                                                "operation" +
                                                hint + "; faults apply to one of " + valid);
  }
  if (!(fault.error_rate >= 0 && fault.error_rate <= 1)) {
    throw Ec2Error("InvalidParameterValue", "Value (" + nlohmann::json(fault.error_rate).dump() +
                                                ") for parameter ErrorRate is invalid: it is a "
                                                "probability, from 0 to 1");
  }
  if (fault.count < -1) {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + std::to_string(fault.count) +
                       ") for parameter Count is invalid: use -1 (every call) or a count >= 0");
  }
  if (fault.latency_ms < 0) {
    throw Ec2Error("InvalidParameterValue", "Value (" + std::to_string(fault.latency_ms) +
                                                ") for parameter LatencyMs is invalid: it must "
                                                "be >= 0");
  }
  std::lock_guard lock(mutex_);
  faults_[operation] = fault;
}

void Cloud::ClearFaults() {
  std::lock_guard lock(mutex_);
  faults_.clear();
}

std::optional<Fault> Cloud::TakeFault(const std::string& operation) {
  std::lock_guard lock(mutex_);
  auto it = faults_.find(operation);
  if (it == faults_.end() || it->second.count == 0) return std::nullopt;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= it->second.error_rate)
    return std::nullopt;
  Fault f = it->second;
  if (it->second.count > 0) --it->second.count;
  return f;
}

void Cloud::Tick() {
  std::lock_guard lock(mutex_);
  AdvanceLocked();
}

void Cloud::AdvanceLocked() {
  int64_t now = clock_.NowMs();
  bool changed = false;
  for (auto it = volumes_.begin(); it != volumes_.end();) {
    Volume& v = it->second;
    if (v.state == "creating" && !v.stuck && v.ready_at_ms <= now) {
      v.state = "available";
      changed = true;
    }
    if (v.state == "deleting" && v.ready_at_ms <= now) {
      std::string file = VolumeFile(v.id);
      it = volumes_.erase(it);
      CommitLocked();  // forget it first: a leftover file is swept on restart
      ::unlink(file.c_str());
      continue;
    }
    ++it;
  }
  for (auto& [id, s] : snapshots_) {
    if (s.state == "pending" && !s.stuck && s.ready_at_ms <= now) {
      s.state = "completed";
      changed = true;
    }
  }
  for (auto it = attachments_.begin(); it != attachments_.end();) {
    Attachment& a = *it;
    if (a.state == "attaching" && !a.stuck && a.ready_at_ms <= now) {
      a.state = "attached";
      changed = true;
    }
    if ((a.state == "detaching" || a.state == "busy") && !a.stuck && a.ready_at_ms <= now) {
      if (!a.force && loops_.InUse(a.loop_device)) {
        if (a.state != "busy") {
          a.state = "busy";  // still mounted on the host: EC2 waits
          changed = true;
        }
        ++it;
        continue;
      }
      Attachment gone = a;
      it = attachments_.erase(it);
      auto v = volumes_.find(gone.volume);
      if (v != volumes_.end()) v->second.state = "available";
      CommitLocked();  // forget it first: a leftover loop device is swept on restart
      try {
        loops_.Detach(gone.loop_device);
      } catch (const std::exception& e) {
        spdlog::error("detach {} of {}: {}", gone.loop_device, gone.volume, e.what());
      }
      spdlog::info("volume {} detached from {}", gone.volume, gone.instance);
      continue;
    }
    ++it;
  }
  if (changed) CommitLocked();
}

void Cloud::CheckInvariantsLocked() {
  std::map<std::string, std::set<std::string>> instances_of;
  std::map<std::string, int> loop_users;
  std::map<std::string, std::set<std::string>> devices_of;
  for (const auto& a : attachments_) {
    instances_of[a.volume].insert(a.instance);
    ++loop_users[a.loop_device];
    if (!devices_of[a.instance].insert(a.device).second) {
      violations_.push_back("device " + a.device + " used twice on instance " + a.instance);
    }
  }
  for (const auto& [volume, instances] : instances_of) {
    size_t count = std::count_if(attachments_.begin(), attachments_.end(),
                                 [&](const Attachment& a) { return a.volume == volume; });
    if (count > 1) {
      std::string list;
      for (const auto& i : instances) list += " " + i;
      violations_.push_back("volume " + volume + " is attached " + std::to_string(count) +
                            " times (instances" + list + ")");
    }
  }
  for (const auto& [loop, users] : loop_users) {
    if (users > 1) violations_.push_back("loop device " + loop + " backs several attachments");
  }
  for (const auto& [instance, devices] : devices_of) {
    if (devices.size() > kDeviceNames.size()) {
      violations_.push_back("instance " + instance + " has more than 11 attachments");
    }
  }
  for (const auto& [id, v] : volumes_) {
    bool attached = instances_of.count(id) > 0;
    if (attached != (v.state == "in-use")) {
      violations_.push_back("volume " + id + " is '" + v.state + "' with " +
                            (attached ? "an attachment" : "no attachment"));
    }
  }
  for (; violations_reported_ < violations_.size(); ++violations_reported_) {
    spdlog::error("INVARIANT VIOLATED: {}", violations_[violations_reported_]);
  }
}

nlohmann::json Cloud::Persisted(const Volume& v) {
  return {{"Id", v.id},       {"Type", v.type},        {"Zone", v.zone},
          {"State", v.state}, {"SizeGiB", v.size_gib}, {"Iops", v.iops},
          {"Stuck", v.stuck}, {"Snapshot", v.snapshot}};
}

nlohmann::json Cloud::Persisted(const Attachment& a) {
  return {{"Volume", a.volume}, {"Instance", a.instance}, {"Device", a.device},
          {"State", a.state},   {"Loop", a.loop_device},  {"Force", a.force},
          {"Stuck", a.stuck}};
}

nlohmann::json Cloud::Persisted(const Instance& i) {
  return {{"Id", i.id}, {"Host", i.host}, {"State", i.state}, {"Zone", i.zone}};
}

nlohmann::json Cloud::Persisted(const Snapshot& s) {
  return {{"Id", s.id},
          {"Volume", s.volume},
          {"State", s.state},
          {"Description", s.description},
          {"StartTime", s.start_time},
          {"Tags", s.tags},
          {"SizeGiB", s.size_gib},
          {"Stuck", s.stuck}};
}

// Timers restart with the process: what was due keeps its state until the
// next tick moves it on.
Cloud::Volume Cloud::VolumeFrom(const nlohmann::json& j, int64_t now) {
  Volume v;
  v.id = j["Id"];
  v.type = j["Type"];
  v.zone = j["Zone"];
  v.state = j["State"];
  v.snapshot = j.value("Snapshot", "");  // absent in state files from before snapshots
  v.size_gib = j["SizeGiB"];
  v.iops = j["Iops"];
  v.stuck = j["Stuck"];
  v.visible_at_ms = now;
  v.ready_at_ms = now;
  return v;
}

Cloud::Attachment Cloud::AttachmentFrom(const nlohmann::json& j, int64_t now) {
  Attachment a;
  a.volume = j["Volume"];
  a.instance = j["Instance"];
  a.device = j["Device"];
  a.state = j["State"];
  a.loop_device = j["Loop"];
  a.force = j["Force"];
  a.stuck = j["Stuck"];
  a.ready_at_ms = now;
  return a;
}

Cloud::Snapshot Cloud::SnapshotFrom(const nlohmann::json& j, int64_t now) {
  Snapshot s;
  s.id = j["Id"];
  s.volume = j["Volume"];
  s.state = j["State"];
  s.description = j["Description"];
  s.start_time = j["StartTime"];
  s.tags = j["Tags"].get<std::map<std::string, std::string>>();
  s.size_gib = j["SizeGiB"];
  s.stuck = j["Stuck"];
  s.ready_at_ms = now;
  return s;
}

void Cloud::CommitLocked() {
  CheckInvariantsLocked();
  nlohmann::json state = {{"Volumes", nlohmann::json::array()},
                          {"Instances", nlohmann::json::array()},
                          {"Attachments", nlohmann::json::array()},
                          {"Snapshots", nlohmann::json::array()},
                          {"Violations", violations_}};
  for (const auto& [id, v] : volumes_) state["Volumes"].push_back(Persisted(v));
  for (const auto& [id, i] : instances_) state["Instances"].push_back(Persisted(i));
  for (const auto& a : attachments_) state["Attachments"].push_back(Persisted(a));
  for (const auto& [id, s] : snapshots_) state["Snapshots"].push_back(Persisted(s));
  WriteFileAtomically(config_.state_dir + "/state.json", state.dump() + "\n");
}

void Cloud::LoadLocked() {
  std::string path = config_.state_dir + "/state.json";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  auto state = nlohmann::json::parse(platform::ReadWholeFile(path));
  int64_t now = clock_.NowMs();
  for (const auto& j : state["Volumes"]) {
    Volume v = VolumeFrom(j, now);
    volumes_[v.id] = v;
  }
  for (const auto& j : state["Instances"]) {
    instances_[j["Id"]] = Instance{j["Id"], j["Host"], j["State"], j["Zone"]};
  }
  for (const auto& j : state["Attachments"]) attachments_.push_back(AttachmentFrom(j, now));
  nlohmann::json snapshots = state.value("Snapshots", nlohmann::json::array());
  for (const auto& j : snapshots) {
    Snapshot s = SnapshotFrom(j, now);
    snapshots_[s.id] = s;
  }
  violations_ = state["Violations"].get<std::vector<std::string>>();
  violations_reported_ = violations_.size();
}

template <typename Records>
void Cloud::SweepUnrecorded(const std::string& dir, const std::string& suffix,
                            const Records& records) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    std::string file = e->d_name;
    if (file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    if (!records.count(file.substr(0, file.size() - suffix.size()))) {
      spdlog::warn("removing unrecorded file {}/{}", dir, file);
      ::unlink((dir + "/" + file).c_str());
    }
  }
  ::closedir(d);
}

void Cloud::ReconcileLocked() {
  std::string volumes_dir = config_.state_dir + "/volumes";
  // Loop devices over our files that no attachment accounts for (a crash
  // between attaching and persisting, or after forgetting): release them.
  std::set<std::string> accounted;
  for (auto& a : attachments_) {
    if (loops_.BackingFile(a.loop_device) == VolumeFile(a.volume)) {
      accounted.insert(a.loop_device);
      continue;
    }
    // The recorded device is gone (or reused by someone else): give the
    // attachment a new one.
    a.loop_device = loops_.Attach(VolumeFile(a.volume));
    accounted.insert(a.loop_device);
    spdlog::warn("reattached {} as {} after a restart", a.volume, a.loop_device);
  }
  for (const auto& [device, backing] : loops_.DevicesUnder(volumes_dir)) {
    if (accounted.count(device)) continue;
    spdlog::warn("releasing leaked loop device {} ({})", device, backing);
    loops_.Detach(device);
  }
  // Volume and snapshot files the state does not know: a crash before
  // recording a create, or after recording a delete.
  SweepUnrecorded(volumes_dir, ".img", volumes_);
  SweepUnrecorded(config_.state_dir + "/snapshots", ".img", snapshots_);
}

}  // namespace flexkit::fakes::ebs
