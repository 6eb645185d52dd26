#pragma once
// Profiles flexconform makes without a YAML file: one derived from a
// driver's own `init` (`--driver PATH`), and the bundled convoy-flexvolume
// against the fake Convoy/EBS (no arguments at all).
#include <string>

#include "conformance/profile.h"

namespace flexkit::conform {

// Runs `init` once (no namespace needed) and takes its capabilities;
// fixture none; two nodes; controller-managed attach; the driver name from the folder
// ("vendor~drv") or, when the folder does not say, "flexconform/<executable>". Throws when init
// does not answer a decodable Success.
DriverProfile DeriveProfile(const std::string& driver_path);
// The driver name its folder gives ("vendor~drv/drv" -> "vendor/drv"), or
// "flexconform/<executable>" when the folder is not a plugin folder.
std::string DriverNameFor(const std::string& driver_path);

// convoy-flexvolume (attach mode, fsTypes ext4 and xfs) on convoy-fake,
// both found beside flexconform's build output (`flexconform_dir`/../driver,
// /../fakes) unless FLEXCONFORM_CONVOY_DRIVER / FLEXCONFORM_CONVOY_FAKE say.
DriverProfile BundledConvoyProfile(const std::string& flexconform_dir);

// The same driver on convoy-fake playing stock Convoy v0.5.2 (`--api stock`):
// ext4 only (stock formats nothing else), and the cases that need EBS
// take-over, which stock cannot do, skipped with that reason.
DriverProfile BundledStockConvoyProfile(const std::string& flexconform_dir);

}  // namespace flexkit::conform
