#pragma once
// Names that reach the Convoy daemon or a path must be checked first: they
// come from users (PV names, options) and kubelet (node names).
#include <string>

namespace convoy_flexvolume {

// Convoy's own rule, ^[a-zA-Z0-9][a-zA-Z0-9_.-]+$, capped at 253 bytes.
bool IsValidVolumeName(const std::string& name);

// A Kubernetes node name (DNS subdomain: lowercase alphanumerics, '-', '.'),
// safe as a single path component.
bool IsSafeNodeName(const std::string& node);

// `value` JSON-quoted for a message, shortened to 64 bytes with "..." so a
// hostile 1 MiB value does not become a 1 MiB error.
std::string Quoted(const std::string& value);

}  // namespace convoy_flexvolume
