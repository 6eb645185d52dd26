#pragma once
// Start-up of one Convoy daemon on its root (state dir): the root lock that
// keeps a second daemon off it, and the persisted config that wins over
// command-line options on a restart (reference §1.1, recording A2).
#include <string>

#include "fakes/convoy/daemon.h"

namespace flexkit::fakes::convoy {

// Holds <root>/lock (flock) for the daemon's lifetime; removes it on exit.
class RootLock {
 public:
  // Throws ConvoyError("Failed to lock the file at <root>/lock: ...").
  explicit RootLock(const std::string& root);
  ~RootLock();
  RootLock(const RootLock&) = delete;
  RootLock& operator=(const RootLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

struct PersistedSettings {
  DaemonConfig daemon;
  std::string vfs_path;  // only meaningful with the vfs driver
};

// Loads <root>/convoy.cfg and <root>/vfs/vfs.cfg when they exist (they win),
// otherwise saves `from_flags` there and returns it.
PersistedSettings LoadOrSaveSettings(const PersistedSettings& from_flags);

}  // namespace flexkit::fakes::convoy
