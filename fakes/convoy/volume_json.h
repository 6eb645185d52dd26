#pragma once
// Convoy's VolumeResponse and DriverInfo maps as json.MarshalIndent(v, "",
// "\t") writes them, rendered by hand: listing 10,000 volumes must take
// milliseconds, and drivers pre-render their listings with these.
#include <string>

#include "fakes/convoy/volume_driver.h"

namespace flexkit::fakes::convoy {

// `info` plus "Driver", keys sorted, nested `depth` levels deep.
void AppendInfo(std::string& out, const InfoMap& info, const std::string& driver, int depth);
// {Name, Driver, MountPoint, CreatedTime, DriverInfo, Snapshots}, nested `depth` levels deep.
void AppendVolumeResponse(std::string& out, const std::string& name, const std::string& driver,
                          const VolumeListing& listing, int depth);

}  // namespace flexkit::fakes::convoy
