#pragma once
// The interface a FlexVolume driver implements: one method per verb kubelet
// or the attach/detach controller calls (reference flexvolume-protocol.md §5).
// Every verb but Init defaults to "Not supported", which kubelet caches and
// answers with its own fallback (§3.4). Methods may throw; the dispatcher
// turns an exception into a Failure reply.
#include <cstdint>
#include <string>

#include "driver/sdk/options.h"
#include "driver/sdk/status.h"

namespace flexvolume {

class Driver {
 public:
  virtual ~Driver() = default;

  // `init`: must succeed, be fast and have no side effects (kubelet re-runs it
  // on every change in the driver's folder). Set status.capabilities.
  virtual DriverStatus Init() = 0;

  // `getvolumename <json>`: kubelet ignores the answer; must never fail.
  virtual DriverStatus GetVolumeName(const Options& opts);

  // `attach <json> <node>`: reply with `device`. Repeating it returns the same device.
  virtual DriverStatus Attach(const Options& opts, const std::string& node);

  // `detach <volumeName> <node>`: the PV or inline volume name, never a
  // device. Success when already detached.
  virtual DriverStatus Detach(const std::string& volume_name, const std::string& node);

  // `waitforattach <device> <json>`: `device` may be "". Reply with `device`.
  virtual DriverStatus WaitForAttach(const std::string& device, const Options& opts);

  // `isattached <json> <node>`: reply with `attached`.
  virtual DriverStatus IsAttached(const Options& opts, const std::string& node);

  // `mountdevice <dir> <device> <json>`: leave a real mount at `dir`.
  virtual DriverStatus MountDevice(const std::string& dir, const std::string& device,
                                   const Options& opts);

  // `unmountdevice <dir>`: Success when nothing is mounted there.
  virtual DriverStatus UnmountDevice(const std::string& dir);

  // `mount <dir> <json>`: the only verb whose options carry pod info,
  // fsGroup and (decoded) secrets.
  virtual DriverStatus Mount(const std::string& dir, const Options& opts);

  // `unmount <dir>`: Success on an unmounted dir; leave it empty.
  virtual DriverStatus Unmount(const std::string& dir);

  // `expandvolume <json> <deviceMountPath> <newBytes> <oldBytes>`.
  virtual DriverStatus ExpandVolume(const Options& opts, const std::string& device_mount_path,
                                    uint64_t new_size, uint64_t old_size);

  // `expandfs <json> <device> <podVolumeDir> <newBytes> <oldBytes>`.
  virtual DriverStatus ExpandFs(const Options& opts, const std::string& device,
                                const std::string& pod_volume_dir, uint64_t new_size,
                                uint64_t old_size);
};

}  // namespace flexvolume
