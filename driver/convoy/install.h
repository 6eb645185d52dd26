#pragma once
// Installs a driver binary where kubelet's prober finds it,
// <plugin-dir>/<vendor>~<driver>/<driver>, so that the watched name never
// refers to a half-written file: the bytes go to a dot-file (ignored by the
// prober), are fsynced, made 0755 and renamed over the final name.
#include <string>

namespace convoy_flexvolume {

enum class InstallResult { kInstalled, kAlreadyInstalled };

// Copies `source` to <plugin_dir>/<vendor_dir>/<name>. When an identical file
// is already there nothing is written (no needless re-probe by kubelet).
// Throws std::runtime_error saying what failed.
InstallResult InstallDriver(const std::string& source, const std::string& plugin_dir,
                            const std::string& vendor_dir, const std::string& name);

}  // namespace convoy_flexvolume
