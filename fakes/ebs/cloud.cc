#include "fakes/ebs/cloud.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "fakes/common/files.h"

namespace flexkit::fakes::ebs {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const std::vector<std::string> kDeviceNames = {"/dev/sdf", "/dev/sdg", "/dev/sdh", "/dev/sdi",
                                               "/dev/sdj", "/dev/sdk", "/dev/sdl", "/dev/sdm",
                                               "/dev/sdn", "/dev/sdo", "/dev/sdp"};
const std::set<std::string> kVolumeTypes = {"gp2", "io1", "standard", "st1", "sc1"};

}  // namespace

Cloud::Cloud(CloudConfig config, Clock& clock, LoopDevices& loops)
    : config_(std::move(config)), clock_(clock), loops_(loops), rng_(std::random_device{}()) {
  MakeDirs(config_.state_dir + "/volumes", 0700);
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

Cloud::Volume& Cloud::FindVolumeLocked(const std::string& id) {
  auto it = volumes_.find(id);
  if (it == volumes_.end()) {
    throw Ec2Error("InvalidVolume.NotFound", "The volume '" + id + "' does not exist.");
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

nlohmann::json Cloud::VolumeJsonLocked(const Volume& v) const {
  nlohmann::json attachments = nlohmann::json::array();
  for (const auto& a : attachments_) {
    if (a.volume == v.id) attachments.push_back(AttachmentJson(a));
  }
  return {{"VolumeId", v.id},           {"Size", v.size_gib},
          {"VolumeType", v.type},       {"Iops", v.iops},
          {"AvailabilityZone", v.zone}, {"State", v.state},
          {"Attachments", attachments}};
}

nlohmann::json Cloud::CreateVolume(int64_t size_gib, const std::string& type, int64_t iops,
                                   const std::string& zone, bool stuck) {
  std::string t = type.empty() ? "gp2" : type;
  if (!kVolumeTypes.count(t)) {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + t + ") for parameter volumeType is invalid.");
  }
  if (size_gib < 1 || size_gib > 16384) {
    throw Ec2Error("InvalidParameterValue",
                   "Value (" + std::to_string(size_gib) + ") for parameter size is invalid.");
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
  Volume v;
  v.id = NewId("vol");
  v.type = t;
  v.zone = z;
  v.size_gib = size_gib;
  v.iops = iops;
  v.state = "creating";
  int64_t now = clock_.NowMs();
  v.visible_at_ms = now + config_.consistency_delay_ms;
  v.ready_at_ms = now + config_.transition_delay_ms;
  v.stuck = stuck;
  std::string file = VolumeFile(v.id);
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ::ftruncate(fd, size_gib * kGiB) != 0) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(file.c_str());
    throw Ec2Error("InternalError", "create sparse file " + file + ": " + std::strerror(err));
  }
  ::close(fd);
  volumes_[v.id] = v;
  AdvanceLocked();
  CommitLocked();
  spdlog::info("CreateVolume {} ({} GiB {}) in {}", v.id, size_gib, t, z);
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
      if (v.visible_at_ms > now) {
        throw Ec2Error("InvalidVolume.NotFound", "The volume '" + id + "' does not exist.");
      }
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
  if (inst == nullptr || inst->state == "terminated") {
    throw Ec2Error("InvalidInstanceID.NotFound",
                   "The instance ID '" + instance + "' does not exist");
  }
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
    throw Ec2Error("InternalError", std::string("attach ") + volume + ": " + e.what());
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
    if (!instance.empty()) {
      throw Ec2Error("InvalidAttachment.NotFound", "Volume " + volume +
                                                       " can not be detached from " + instance +
                                                       " because it is not attached");
    }
    throw Ec2Error("IncorrectState", "Volume '" + volume + "' is in the '" + v.state + "' state.");
  }
  if (!instance.empty() && a->instance != instance) {
    // Never touch another instance's attachment: a late detach from an old host.
    throw Ec2Error("InvalidAttachment.NotFound", "Volume " + volume + " can not be detached from " +
                                                     instance + " because it is not attached");
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
    out.push_back({{"InstanceId", id},
                   {"Host", inst.host},
                   {"State", inst.state},
                   {"AvailabilityZone", inst.zone}});
  }
  for (const auto& id : ids) {
    if (!instances_.count(id)) {
      throw Ec2Error("InvalidInstanceID.NotFound", "The instance ID '" + id + "' does not exist");
    }
  }
  return out;
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
  if (inst == nullptr) {
    throw Ec2Error("InvalidInstanceID.NotFound",
                   "The instance ID '" + instance + "' does not exist");
  }
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
  nlohmann::json volumes = nlohmann::json::array(), instances = nlohmann::json::array();
  for (const auto& [id, v] : volumes_) volumes.push_back(VolumeJsonLocked(v));
  for (const auto& [id, i] : instances_) {
    instances.push_back(
        {{"InstanceId", id}, {"Host", i.host}, {"State", i.state}, {"AvailabilityZone", i.zone}});
  }
  nlohmann::json faults = nlohmann::json::object();
  for (const auto& [op, f] : faults_) {
    faults[op] = {{"LatencyMs", f.latency_ms}, {"ErrorCode", f.error_code},
                  {"ErrorRate", f.error_rate}, {"Count", f.count},
                  {"Stuck", f.stuck},          {"DropConnection", f.drop_connection}};
  }
  return {{"Volumes", volumes},
          {"Instances", instances},
          {"Faults", faults},
          {"Violations", violations_}};
}

std::vector<std::string> Cloud::Violations() {
  std::lock_guard lock(mutex_);
  return violations_;
}

void Cloud::SetFault(const std::string& operation, const Fault& fault) {
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

void Cloud::CommitLocked() {
  CheckInvariantsLocked();
  nlohmann::json volumes = nlohmann::json::array(), instances = nlohmann::json::array(),
                 attachments = nlohmann::json::array();
  for (const auto& [id, v] : volumes_) {
    volumes.push_back({{"Id", v.id},
                       {"Type", v.type},
                       {"Zone", v.zone},
                       {"State", v.state},
                       {"SizeGiB", v.size_gib},
                       {"Iops", v.iops},
                       {"Stuck", v.stuck}});
  }
  for (const auto& [id, i] : instances_) {
    instances.push_back({{"Id", i.id}, {"Host", i.host}, {"State", i.state}, {"Zone", i.zone}});
  }
  for (const auto& a : attachments_) {
    attachments.push_back({{"Volume", a.volume},
                           {"Instance", a.instance},
                           {"Device", a.device},
                           {"State", a.state},
                           {"Loop", a.loop_device},
                           {"Force", a.force},
                           {"Stuck", a.stuck}});
  }
  nlohmann::json state = {{"Volumes", volumes},
                          {"Instances", instances},
                          {"Attachments", attachments},
                          {"Violations", violations_}};
  WriteFileAtomically(config_.state_dir + "/state.json", state.dump() + "\n");
}

void Cloud::LoadLocked() {
  std::string path = config_.state_dir + "/state.json";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  auto state = nlohmann::json::parse(ReadFile(path));
  int64_t now = clock_.NowMs();
  for (const auto& j : state["Volumes"]) {
    Volume v;
    v.id = j["Id"];
    v.type = j["Type"];
    v.zone = j["Zone"];
    v.state = j["State"];
    v.size_gib = j["SizeGiB"];
    v.iops = j["Iops"];
    v.stuck = j["Stuck"];
    v.visible_at_ms = now;  // timers restart with the process
    v.ready_at_ms = now;
    volumes_[v.id] = v;
  }
  for (const auto& j : state["Instances"]) {
    instances_[j["Id"]] = Instance{j["Id"], j["Host"], j["State"], j["Zone"]};
  }
  for (const auto& j : state["Attachments"]) {
    Attachment a;
    a.volume = j["Volume"];
    a.instance = j["Instance"];
    a.device = j["Device"];
    a.state = j["State"];
    a.loop_device = j["Loop"];
    a.force = j["Force"];
    a.stuck = j["Stuck"];
    a.ready_at_ms = now;
    attachments_.push_back(a);
  }
  violations_ = state["Violations"].get<std::vector<std::string>>();
  violations_reported_ = violations_.size();
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
  // Volume files the state does not know: a crash before recording a create,
  // or after recording a delete.
  DIR* dir = ::opendir(volumes_dir.c_str());
  if (dir == nullptr) return;
  while (dirent* e = ::readdir(dir)) {
    std::string file = e->d_name;
    if (file.size() < 5 || file.substr(file.size() - 4) != ".img") continue;
    std::string id = file.substr(0, file.size() - 4);
    if (!volumes_.count(id)) {
      spdlog::warn("removing unrecorded volume file {}", file);
      ::unlink((volumes_dir + "/" + file).c_str());
    }
  }
  ::closedir(dir);
}

}  // namespace flexkit::fakes::ebs
