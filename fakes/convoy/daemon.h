#pragma once
// The Convoy v0.5.2 daemon's HTTP API (reference §1): REST routes with and
// without a `/v<version>` prefix, the Docker volume plugin routes, Convoy's
// exact response shapes and error texts, over the loaded drivers.
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fakes/common/name_locks.h"
#include "fakes/convoy/volume_driver.h"
#include "fakes/http/message.h"

namespace flexkit::fakes::convoy {

struct DaemonConfig {
  std::string root;                  // the state dir, Convoy's --root
  std::vector<std::string> drivers;  // the first one is the default driver
  bool ignore_docker_delete = false;
  bool create_on_docker_mount = false;
  // Stock v0.5.2 (`--api stock`): the extension keys of create and mount are
  // unknown fields, so ignored. Not persisted: it is what the binary is.
  bool stock = false;
};

class ConvoyDaemon {
 public:
  // `drivers` in the order of config.drivers.
  ConvoyDaemon(DaemonConfig config, std::vector<std::unique_ptr<VolumeDriver>> drivers);

  http::Response Handle(const http::Request& request);

 private:
  http::Response Rest(const std::string& route, const http::Request& request);
  http::Response Plugin(const std::string& route, const http::Request& request);

  http::Response Info();
  http::Response VolumeList(const http::Request& request);
  http::Response VolumeInspect(const std::string& body);
  http::Response VolumeCreate(const std::string& body);
  http::Response VolumeMount(const std::string& body);
  http::Response VolumeUmount(const std::string& body);
  http::Response VolumeDelete(const std::string& body);
  http::Response SnapshotCreate(const std::string& body);
  http::Response SnapshotInspect(const std::string& body);
  http::Response SnapshotDelete(const std::string& body);
  http::Response BackupCreate(const std::string& body);
  http::Response BackupList(const std::string& body);
  http::Response BackupInspect(const std::string& body);
  http::Response BackupDelete(const std::string& body);

  // The shape most handlers share: check the volume's name, hold its lock,
  // find its driver (or throw `missing(name)`), then `answer(name, driver)`.
  using MissingVolume = ConvoyError (*)(const std::string& name);
  template <typename Answer>
  http::Response WithVolume(const std::string& name, MissingVolume missing, Answer&& answer);
  // The same for a snapshot's volume, found in the snapshot index;
  // `unindexed` is the text (before the snapshot's name) when it is not there.
  template <typename Answer>
  http::Response WithSnapshotVolume(const std::string& snapshot, const std::string& unindexed,
                                    Answer&& answer);
  // The driver that made a backup URL: ebs:// is the ebs driver's, any
  // other URL the vfs driver's object store.
  VolumeDriver& BackupDriverFor(const std::string& url);
  // Shared by REST create and the plugin's Create/Mount: returns the name.
  std::string CreateVolume(CreateRequest request, const std::string& driver_name);
  // Shared by REST delete and the plugin's Remove (the caller holds the lock).
  void DeleteVolume(const std::string& name, VolumeDriver& driver, bool reference_only);
  // The driver that has `name`, or nullptr (Convoy's getVolume).
  VolumeDriver* FindVolume(const std::string& name);
  VolumeDriver* FindDriver(const std::string& name);
  // A VolumeResponse, tab-indented as Convoy writes it.
  std::string VolumeResponse(const std::string& name, const VolumeDriver& driver,
                             const VolumeListing& listing) const;

  // Convoy's NameUUIDIndex (volume and snapshot names) and
  // SnapshotVolumeIndex (snapshot -> volume), rebuilt from the drivers.
  bool NameTaken(const std::string& name);
  std::string VolumeOfSnapshot(const std::string& snapshot);

  DaemonConfig config_;
  std::vector<std::unique_ptr<VolumeDriver>> drivers_;
  NameLocks volume_locks_;
  std::mutex index_mutex_;
  std::map<std::string, bool> name_index_;
  std::map<std::string, std::string> snapshot_volume_index_;
};

}  // namespace flexkit::fakes::convoy
