#pragma once
// The Convoy daemon's REST API (reference convoy-api.md §1) as the driver
// uses it, behind an interface so verbs can be tested with a mock.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace convoy_flexvolume {

// A volume as GET /v1/volumes/ describes it (VolumeResponse).
struct VolumeInfo {
  std::string name;
  std::string driver;
  std::string mount_point;
  std::map<std::string, std::string> driver_info;

  // Where the volume is on the host: the block device (ebs) or the
  // directory (vfs).
  std::string Device() const;
  // Attached to this daemon's host: it has a device, and the daemon does not
  // say otherwise (a reference kept after the volume failed over elsewhere
  // reports Attached "false").
  bool IsAttached() const;
  // The filesystem the daemon found on the volume, "" when it does not say.
  std::string FsType() const;
};

// VolumeCreateRequest (always Verbose) with the Kubernetes FSType extension
// (sent only with `extensions`: a stock daemon ignores it anyway).
struct CreateRequest {
  std::string name;
  std::string driver_name;
  std::string driver_volume_id;
  std::string type;
  std::string fs_type;
  int64_t size = 0;
  int64_t iops = 0;
  bool extensions = true;
};

// VolumeMountRequest with the Kubernetes extensions of DESIGN.md §6.1
// (sent only with `extensions`; without, exactly what the v0.5.2 CLI sends).
struct MountRequest {
  std::string volume_name;
  std::string mount_point;
  std::string read_write;  // "rw" | "ro"
  std::string fs_type;
  std::string bind_mount;  // "" | "bind" (vfs)
  bool remount = false;
  bool extensions = true;
};

// What a daemon's answer to ConvoyClient::ProbeApi showed.
struct ApiProbe {
  enum class Kind { kUnknown, kStock, kExtended } kind = Kind::kUnknown;
  std::string evidence;  // the answer, for the log
};

// A failed request: `status` is the HTTP status, or 0 when no answer came
// (daemon down, timeout, garbage). what() names the daemon, the request and
// the answer.
class ConvoyError : public std::runtime_error {
 public:
  ConvoyError(const std::string& message, int status)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }
  bool answered() const { return status_ != 0; }

 private:
  int status_;
};

class ConvoyClient {
 public:
  virtual ~ConvoyClient() = default;

  // "convoy at <socket>", for messages.
  virtual std::string Endpoint() const = 0;

  // POST /v1/volumes/create (Verbose): create or adopt, and attach here.
  virtual VolumeInfo Create(const CreateRequest& request) = 0;
  // GET /v1/volumes/: nullopt when the daemon answers 404.
  virtual std::optional<VolumeInfo> Inspect(const std::string& name) = 0;
  // GET /v1/volumes/list
  virtual std::map<std::string, VolumeInfo> List() = 0;
  // POST /v1/volumes/mount: returns the mount point.
  virtual std::string Mount(const MountRequest& request) = 0;
  // POST /v1/volumes/umount
  virtual void Umount(const std::string& name) = 0;
  // DELETE /v1/volumes/: false when the daemon does not know the volume (404).
  virtual bool Delete(const std::string& name, bool reference_only) = 0;

  // Whether the daemon has the Kubernetes extensions, from a request that
  // changes nothing on either: POST /v1/volumes/mount with no volume name and
  // a number for ReadWrite. A daemon that knows ReadWrite refuses the number
  // ("json: cannot unmarshal number into ... ReadWrite ..."); stock v0.5.2
  // ignores the unknown key and answers "volume  doesn't exist".
  virtual ApiProbe ProbeApi() = 0;
  // Names this run of the daemon: changes when it restarts (the socket is
  // made anew at each start). Empty when it cannot be told.
  virtual std::string DaemonInstance() const = 0;
};

// Makes the client for the daemon at a socket path.
class ConvoyClientFactory {
 public:
  virtual ~ConvoyClientFactory() = default;
  virtual std::unique_ptr<ConvoyClient> ForSocket(const std::string& socket_path) = 0;
};

}  // namespace convoy_flexvolume
