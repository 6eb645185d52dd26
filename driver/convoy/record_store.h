#pragma once
// Small facts the driver must remember between calls, one file per record
// under a directory of the configured state dir, written atomically (temp
// file, fsync, rename). Keys are lists of names, each checked to be a single
// safe path component.
//
// Used for: the Convoy name a (node, PV name) was attached as when the user
// chose it with `name` (kubelet's detach passes only the PV name), and the
// EBS volume id behind a Convoy name (so a volume detached and attached again
// is the same disk, not a new blank one: Convoy's daemons forget a volume
// once it is detached).
#include <optional>
#include <string>
#include <vector>

namespace convoy_flexvolume {

class RecordStore {
 public:
  explicit RecordStore(std::string dir) : dir_(std::move(dir)) {}

  // Throws std::runtime_error when the key is unsafe or the file cannot be
  // written.
  void Put(const std::vector<std::string>& key, const std::string& value);
  std::optional<std::string> Get(const std::vector<std::string>& key) const;
  void Erase(const std::vector<std::string>& key);

 private:
  // Empty when a key part could not be a single path component.
  std::string PathFor(const std::vector<std::string>& key) const;
  std::string dir_;
};

}  // namespace convoy_flexvolume
