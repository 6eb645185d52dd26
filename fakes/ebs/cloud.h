#pragma once
// The EBS cloud model (reference §4, DESIGN §6.2): volumes backed by sparse
// files, instances (one per host), attachments backed by loop devices,
// snapshots (a sparse copy of the volume file taken when the snapshot
// starts, `pending` until the snapshot delay passes, then `completed`),
// EC2's error codes and texts, timed transitions and an eventual-consistency
// window (both configurable, zero for instant), fault injection per
// operation, and the invariant that a volume is never attached to two
// instances, checked after every change.
//
// Every change is persisted (state.json, atomically) before it is
// acknowledged; on start the model reconciles with the host: loop devices
// and volume files that the state does not account for are released, and an
// attachment whose loop device vanished gets a new one.
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/common/errors.h"
#include "fakes/ebs/clock.h"
#include "fakes/ebs/loop_devices.h"

namespace flexkit::fakes::ebs {

struct Ec2Error : FakeError {
  Ec2Error(std::string error_code, const std::string& message)
      : FakeError(message), code(std::move(error_code)) {}
  std::string code;
};

// The EC2 operations the model implements, as the API's /ec2/<Operation>
// routes name them (case-sensitive); a fault names one of these.
const std::vector<std::string>& Ec2Operations();

struct CloudConfig {
  std::string state_dir;
  std::string availability_zone = "us-east-1a";
  int64_t transition_delay_ms = 0;   // creating, attaching, detaching, deleting
  int64_t consistency_delay_ms = 0;  // a new volume is NotFound to Describe this long
  int64_t snapshot_delay_ms = 0;     // a new snapshot is `pending` this long
};

struct Fault {
  int64_t latency_ms = 0;
  std::string error_code;  // "" for none
  double error_rate = 1.0;
  int64_t count = -1;  // injections left; -1 unlimited
  bool stuck = false;  // transitions started by this operation never finish
  bool drop_connection = false;
};

class Cloud {
 public:
  Cloud(CloudConfig config, Clock& clock, LoopDevices& loops);

  // EC2 operations. Each throws Ec2Error with EC2's code and message.
  // From a snapshot when `snapshot` is set: its data, and its size when
  // size_gib is 0 (a smaller size is InvalidParameterValue).
  nlohmann::json CreateVolume(int64_t size_gib, const std::string& type, int64_t iops,
                              const std::string& zone, bool stuck = false,
                              const std::string& snapshot = "");
  // By id (eventual consistency applies), or all (attached_to filters by instance).
  nlohmann::json DescribeVolumes(const std::vector<std::string>& ids,
                                 const std::string& attached_to);
  nlohmann::json AttachVolume(const std::string& volume, const std::string& instance,
                              const std::string& device, bool stuck = false);
  nlohmann::json DetachVolume(const std::string& volume, const std::string& instance, bool force,
                              bool stuck = false);
  void DeleteVolume(const std::string& volume);
  nlohmann::json DescribeInstances(const std::vector<std::string>& ids);
  // The volume's data as it is now; `stuck` keeps it pending forever.
  nlohmann::json CreateSnapshot(const std::string& volume, const std::string& description,
                                const std::map<std::string, std::string>& tags, bool stuck = false);
  // By id, or all (of_volume filters by the volume they were taken from).
  nlohmann::json DescribeSnapshots(const std::vector<std::string>& ids,
                                   const std::string& of_volume);
  void DeleteSnapshot(const std::string& snapshot);

  // Admin operations.
  nlohmann::json RunInstance(const std::string& host);  // the host's instance, created once
  void SetInstanceState(const std::string& instance, const std::string& state);
  nlohmann::json State();
  std::vector<std::string> Violations();
  // Refuses (InvalidParameterValue, nothing changed) an operation not in
  // Ec2Operations() (the text names it and lists the valid ones), an
  // ErrorRate outside 0..1, a Count below -1 and a negative LatencyMs.
  void SetFault(const std::string& operation, const Fault& fault);
  void ClearFaults();
  // The fault that hits this call of `operation`, if any (rate and count applied).
  std::optional<Fault> TakeFault(const std::string& operation);

  // Completes the transitions whose time has come (called by every
  // operation and by a ticker, so a busy detach ends once unmounted).
  void Tick();

 private:
  struct Volume {
    std::string id, type, zone, state, snapshot;  // snapshot: what it was created from
    int64_t size_gib = 0, iops = 0;
    int64_t visible_at_ms = 0, ready_at_ms = 0;
    bool stuck = false;
  };
  struct Attachment {
    std::string volume, instance, device, state, loop_device;
    int64_t ready_at_ms = 0;
    bool force = false, stuck = false;
  };
  struct Instance {
    std::string id, host, state, zone;
  };
  struct Snapshot {
    std::string id, volume, state, description, start_time;
    std::map<std::string, std::string> tags;
    int64_t size_gib = 0;
    int64_t ready_at_ms = 0;
    bool stuck = false;
  };
  // How each is written to and read back from state.json.
  static nlohmann::json Persisted(const Volume& v);
  static nlohmann::json Persisted(const Attachment& a);
  static nlohmann::json Persisted(const Instance& i);
  static nlohmann::json Persisted(const Snapshot& s);
  static Volume VolumeFrom(const nlohmann::json& j, int64_t now);
  static Attachment AttachmentFrom(const nlohmann::json& j, int64_t now);
  static Snapshot SnapshotFrom(const nlohmann::json& j, int64_t now);

  void AdvanceLocked();
  void CommitLocked();  // invariant check + persist
  void CheckInvariantsLocked();
  void LoadLocked();
  void ReconcileLocked();
  std::string NewId(const std::string& prefix);
  std::string VolumeFile(const std::string& id) const;
  std::string SnapshotFile(const std::string& id) const;
  Volume& FindVolumeLocked(const std::string& id);
  Snapshot& FindSnapshotLocked(const std::string& id);
  Instance* FindInstanceLocked(const std::string& id);
  std::vector<Attachment>::iterator AttachmentOfLocked(const std::string& volume);
  nlohmann::json VolumeJsonLocked(const Volume& v) const;
  static nlohmann::json AttachmentJson(const Attachment& a);
  static nlohmann::json InstanceJson(const Instance& i);
  static nlohmann::json SnapshotJson(const Snapshot& s);
  // Removes the files under `dir` named <id><suffix> whose id has no record.
  template <typename Records>
  static void SweepUnrecorded(const std::string& dir, const std::string& suffix,
                              const Records& records);

  CloudConfig config_;
  Clock& clock_;
  LoopDevices& loops_;
  std::mutex mutex_;
  std::mt19937_64 rng_;
  std::map<std::string, Volume> volumes_;
  std::map<std::string, Instance> instances_;
  std::map<std::string, Snapshot> snapshots_;
  std::vector<Attachment> attachments_;  // as EC2's Attachments: one per volume, checked
  std::map<std::string, Fault> faults_;
  std::vector<std::string> violations_;
  size_t violations_reported_ = 0;  // already logged
};

}  // namespace flexkit::fakes::ebs
