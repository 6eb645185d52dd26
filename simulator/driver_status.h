#pragma once
// kubelet's DriverStatus and how handleCmdResponse fills it: the struct is
// pre-filled with the default capabilities, then Go's json.Unmarshal decodes
// the driver's combined output into it (reference §3.1, §3.3).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flexkit::sim {

// Go zero value is all false; kubelet's defaults come from Defaults().
struct DriverCapabilities {
  bool attach = false;
  bool selinux_relabel = false;
  bool supports_metrics = false;
  bool fs_group = false;
  bool requires_fs_resize = false;

  static DriverCapabilities Defaults();  // attach, selinuxRelabel, fsGroup, requiresFSResize true
  bool operator==(const DriverCapabilities&) const = default;
};

struct DriverStatus {
  std::string status;
  std::string message;
  std::string device;
  std::string volume_name;
  bool attached = false;
  // nullopt when the reply said "capabilities": null (Go sets the pointer to
  // nil; a later object allocates a zero struct, not the defaults).
  std::optional<DriverCapabilities> capabilities = DriverCapabilities::Defaults();
  std::int64_t volume_new_size = 0;
};

// What decoding noticed that Go silently accepts; strict mode reports them.
struct DecodeNotes {
  std::vector<std::string> non_canonical_keys;  // matched only case-insensitively
  std::vector<std::string> duplicate_keys;      // a later one won
  std::vector<std::string> unknown_keys;        // ignored
};

struct DecodedStatus {
  DriverStatus status;  // as decoding left it (partially filled on a type error)
  std::string error;    // Go's error text; empty when json.Unmarshal succeeded
  DecodeNotes notes;
  bool ok() const { return error.empty(); }
};

// json.Unmarshal(output, &status) with status pre-filled, Go semantics:
// syntax checked first (one value, trailing data is an error), keys matched
// exactly then case-insensitively, last duplicate wins, unknown keys ignored,
// types strict (the first type error is returned after decoding the rest),
// null leaves strings and bools unchanged, top-level null is a no-op.
DecodedStatus DecodeDriverStatus(std::string_view output);

}  // namespace flexkit::sim
