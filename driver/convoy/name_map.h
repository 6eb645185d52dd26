#pragma once
// Remembers which Convoy volume a (node, PV name) pair was attached as, when
// the user chose the Convoy name with the `name` option: kubelet's detach
// passes only the PV or inline volume name. Kept under the configured state
// dir of the host that runs attach and detach, one small file per pair,
// written atomically.
#include <optional>
#include <string>

namespace convoy_flexvolume {

class NameMap {
 public:
  explicit NameMap(std::string state_dir) : root_(std::move(state_dir) + "/names") {}

  // Returns false with *err when the record cannot be written.
  bool Record(const std::string& node, const std::string& pv_name, const std::string& convoy_name,
              std::string* err);
  std::optional<std::string> Lookup(const std::string& node, const std::string& pv_name) const;
  void Forget(const std::string& node, const std::string& pv_name);

 private:
  // Empty when node or pv_name could not be a single path component.
  std::string PathFor(const std::string& node, const std::string& pv_name) const;
  std::string root_;
};

}  // namespace convoy_flexvolume
