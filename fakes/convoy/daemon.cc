#include "fakes/convoy/daemon.h"

#include <spdlog/spdlog.h>

#include "fakes/common/errors.h"
#include "fakes/common/files.h"
#include "fakes/convoy/driver_common.h"
#include "fakes/convoy/names.h"
#include "fakes/convoy/objectstore.h"
#include "fakes/convoy/request_types.h"
#include "fakes/convoy/volume_json.h"
#include "gojson/encode.h"

namespace flexkit::fakes::convoy {
namespace {

using http::GoError;
using http::GoText;
using http::Response;

gojson::GoValues Decode(std::string_view body, const gojson::GoStruct& type) {
  gojson::GoDecodeResult r = gojson::GoDecode(body, type);
  if (r.error) throw ConvoyError(*r.error);
  return std::move(r.values);
}

void CheckName(const std::string& name) {
  if (!IsValidConvoyName(name)) throw ConvoyError("Invalid name " + name);
}

nlohmann::ordered_json InfoJson(const InfoMap& info, const std::string& driver) {
  InfoMap with_driver = info;
  with_driver["Driver"] = driver;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : with_driver) j[k] = v;
  return j;
}

Response Empty() { return GoText(""); }

// gorilla/mux's cleanPath: path.Clean, keeping a trailing slash.
std::string MuxCleanPath(const std::string& p) {
  if (p.empty()) return "/";
  std::string rooted = p[0] == '/' ? p : "/" + p;
  std::string cleaned = CleanPath(rooted);
  if (rooted.back() == '/' && cleaned != "/") cleaned += "/";
  return cleaned;
}

// Strips one `/v<[0-9.]+>` prefix, as Convoy registers every route twice.
std::string WithoutVersion(const std::string& path) {
  if (path.size() < 3 || path[0] != '/' || path[1] != 'v') return path;
  size_t i = 2;
  while (i < path.size() && ((path[i] >= '0' && path[i] <= '9') || path[i] == '.')) ++i;
  if (i == 2 || i >= path.size() || path[i] != '/') return path;
  return path.substr(i);
}

const std::map<std::string, std::string>& RestRoutes() {
  static const std::map<std::string, std::string> routes = {
      {"GET /info", "info"},
      {"GET /volumes/list", "volume_list"},
      {"GET /volumes/", "volume_inspect"},
      {"POST /volumes/create", "volume_create"},
      {"POST /volumes/mount", "volume_mount"},
      {"POST /volumes/umount", "volume_umount"},
      {"DELETE /volumes/", "volume_delete"},
      {"POST /snapshots/create", "snapshot_create"},
      {"GET /snapshots/", "snapshot_inspect"},
      {"DELETE /snapshots/", "snapshot_delete"},
      {"POST /backups/create", "backup_create"},
      {"GET /backups/list", "backup_list"},
      {"GET /backups/inspect", "backup_inspect"},
      {"DELETE /backups", "backup_delete"},
  };
  return routes;
}

bool IsPluginRoute(const std::string& path) {
  static const char* kRoutes[] = {
      "/Plugin.Activate",    "/VolumeDriver.Create",  "/VolumeDriver.Remove",
      "/VolumeDriver.Mount", "/VolumeDriver.Unmount", "/VolumeDriver.Path",
      "/VolumeDriver.Get",   "/VolumeDriver.List",    "/VolumeDriver.Capabilities"};
  for (const char* r : kRoutes) {
    if (path == r) return true;
  }
  return false;
}

// Convoy's User-Agent check: a `Convoy-Client/<v>` agent must say v == "1".
std::optional<Response> CheckUserAgent(const http::Request& request) {
  std::string ua = request.Header("User-Agent").value_or("");
  if (ua.find("Convoy-Client/") == std::string::npos) return std::nullopt;
  size_t slash = ua.find('/');
  if (ua.find('/', slash + 1) != std::string::npos) return std::nullopt;  // not exactly 2 parts
  std::string version = ua.substr(slash + 1);
  if (version == "1") return std::nullopt;
  return GoError(404, "client version " + version + " doesn't match with server 1");
}

// Convoy's util.ParseSize: a byte count or a number with k/m/g/t.
int64_t ParseSize(std::string size) {
  for (auto& c : size) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto parse_int = [](const std::string& s) -> int64_t {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0 || s[0] == ' ' || s[0] == '+') {
      throw ConvoyError("strconv.ParseInt: parsing " + gojson::GoQuote(s) + ": " +
                        (errno == ERANGE ? "value out of range" : "invalid syntax"));
    }
    return v;
  };
  bool readable = size.size() >= 2 && std::string("kmgt").find(size.back()) != std::string::npos &&
                  size.find_first_not_of("0123456789.") == size.size() - 1;
  if (!readable) return parse_int(size);
  int64_t value = parse_int(size.substr(0, size.size() - 1));
  int shift = 10 * (1 + static_cast<int>(std::string("kmgt").find(size.back())));
  return value << shift;
}

bool ParseGoBool(const std::string& s) {
  static const std::map<std::string, bool> kValues = {
      {"1", true},    {"t", true},      {"T", true},      {"TRUE", true},
      {"true", true}, {"True", true},   {"0", false},     {"f", false},
      {"F", false},   {"FALSE", false}, {"false", false}, {"False", false}};
  auto it = kValues.find(s);
  if (it == kValues.end()) {
    throw ConvoyError("strconv.ParseBool: parsing " + gojson::GoQuote(s) + ": invalid syntax");
  }
  return it->second;
}

int64_t ParseGoAtoi(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || s[0] == ' ') {
    throw ConvoyError("strconv.Atoi: parsing " + gojson::GoQuote(s) + ": invalid syntax");
  }
  return v;
}

std::string PluginJson(const nlohmann::ordered_json& j) { return gojson::GoIndent(j); }

// The two ways Convoy says a volume is missing: 404 on inspect and delete,
// 400 elsewhere.
ConvoyError VolumeNotFound(const std::string&) { return ConvoyError("Volume not found.", 404); }
ConvoyError VolumeDoesNotExist(const std::string& name) { return NoSuchVolume(name); }

Response PluginErr(const std::string& message) { return GoText(PluginJson({{"Err", message}})); }

}  // namespace

ConvoyDaemon::ConvoyDaemon(DaemonConfig config, std::vector<std::unique_ptr<VolumeDriver>> drivers)
    : config_(std::move(config)), drivers_(std::move(drivers)) {
  for (auto& driver : drivers_) {
    for (const auto& [name, listing] : driver->List()) {
      name_index_[name] = true;
      for (const auto& [snapshot, info] : listing->snapshots) {
        name_index_[snapshot] = true;
        snapshot_volume_index_[snapshot] = name;
      }
    }
  }
}

Response ConvoyDaemon::Handle(const http::Request& request) {
  std::string cleaned = MuxCleanPath(request.path);
  if (cleaned != request.path) {
    Response r;
    r.status = 301;
    r.headers = {{"Location", cleaned + (request.query.empty() ? "" : "?" + request.query)}};
    return r;
  }
  std::string route_key = request.method + " " + WithoutVersion(request.path);
  auto route = RestRoutes().find(route_key);
  try {
    if (route != RestRoutes().end()) {
      if (auto mismatch = CheckUserAgent(request)) return *mismatch;
      return Rest(route->second, request);
    }
    if (request.method == "POST" && IsPluginRoute(request.path)) {
      return Plugin(request.path, request);
    }
  } catch (const ConvoyError& e) {
    return GoError(e.http_status, e.what());
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", request.method, request.target, e.what());
    return GoError(400, ReplyText(e));
  }
  return GoText("Handler not found: " + request.method + " " + request.target, 404);
}

Response ConvoyDaemon::Rest(const std::string& route, const http::Request& request) {
  const std::string& body = request.body;
  if (route == "info") return Info();
  if (route == "volume_list") return VolumeList(request);
  if (route == "volume_inspect") return VolumeInspect(body);
  if (route == "volume_create") return VolumeCreate(body);
  if (route == "volume_mount") return VolumeMount(body);
  if (route == "volume_umount") return VolumeUmount(body);
  if (route == "volume_delete") return VolumeDelete(body);
  if (route == "snapshot_create") return SnapshotCreate(body);
  if (route == "snapshot_inspect") return SnapshotInspect(body);
  if (route == "snapshot_delete") return SnapshotDelete(body);
  if (route == "backup_create") return BackupCreate(body);
  if (route == "backup_list") return BackupList(body);
  if (route == "backup_inspect") return BackupInspect(body);
  return BackupDelete(body);
}

VolumeDriver* ConvoyDaemon::FindDriver(const std::string& name) {
  for (auto& d : drivers_) {
    if (d->Name() == name) return d.get();
  }
  return nullptr;
}

VolumeDriver* ConvoyDaemon::FindVolume(const std::string& name) {
  for (auto& d : drivers_) {
    if (d->VolumeInfo(name)) return d.get();
  }
  return nullptr;
}

bool ConvoyDaemon::NameTaken(const std::string& name) {
  std::lock_guard lock(index_mutex_);
  return name_index_.count(name) > 0;
}

std::string ConvoyDaemon::VolumeOfSnapshot(const std::string& snapshot) {
  std::lock_guard lock(index_mutex_);
  auto it = snapshot_volume_index_.find(snapshot);
  return it == snapshot_volume_index_.end() ? "" : it->second;
}

std::string ConvoyDaemon::VolumeResponse(const std::string& name, const VolumeDriver& driver,
                                         const VolumeListing& listing) const {
  std::string out;
  AppendVolumeResponse(out, name, driver.Name(), listing, 0);
  return out;
}

template <typename Answer>
Response ConvoyDaemon::WithVolume(const std::string& name, MissingVolume missing, Answer&& answer) {
  CheckName(name);
  NameLocks::Guard guard(volume_locks_, name);
  VolumeDriver* driver = FindVolume(name);
  if (driver == nullptr) throw missing(name);
  return answer(name, *driver);
}

template <typename Answer>
Response ConvoyDaemon::WithSnapshotVolume(const std::string& snapshot, const std::string& unindexed,
                                          Answer&& answer) {
  CheckName(snapshot);
  std::string volume = VolumeOfSnapshot(snapshot);
  if (volume.empty()) throw ConvoyError(unindexed + snapshot);
  NameLocks::Guard guard(volume_locks_, volume);
  VolumeDriver* driver = FindVolume(volume);
  if (driver == nullptr) throw ConvoyError("cannot find volume " + volume);
  return answer(volume, *driver);
}

VolumeDriver& ConvoyDaemon::BackupDriverFor(const std::string& url) {
  std::string driver_name = url.starts_with("ebs") ? "ebs" : "vfs";
  VolumeDriver* driver = FindDriver(driver_name);
  if (driver == nullptr) throw ConvoyError("Cannot find driver " + driver_name + " for backup");
  return *driver;
}

Response ConvoyDaemon::Info() {
  nlohmann::ordered_json general = {{"Root", config_.root},
                                    {"DriverList", config_.drivers},
                                    {"DefaultDriver", config_.drivers.front()},
                                    {"MountNamespaceFD", ""},
                                    {"IgnoreDockerDelete", config_.ignore_docker_delete},
                                    {"CreateOnDockerMount", config_.create_on_docker_mount},
                                    {"CmdTimeout", ""}};
  std::string body = "{\n\"General\": " + gojson::GoIndent(general);
  for (auto& d : drivers_) {
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    for (const auto& [k, v] : d->Info()) info[k] = v;
    body += ",\n" + gojson::GoQuote(d->Name()) + ": " + gojson::GoIndent(info);
  }
  return GoText(body + "\n}");
}

Response ConvoyDaemon::VolumeList(const http::Request& request) {
  bool raw = request.QueryParam("driver") == std::optional<std::string>("1");
  // Streamed by hand: 10,000 entries must serialise in milliseconds.
  struct Listed {
    const VolumeDriver* driver;
    std::map<std::string, std::shared_ptr<const VolumeListing>> volumes;
  };
  std::vector<Listed> listed;
  for (auto& d : drivers_) {
    auto volumes = d->List();
    if (!volumes.empty()) listed.push_back({d.get(), std::move(volumes)});
  }
  if (listed.empty()) return GoText("{}");
  std::string body = "{";
  body.reserve(listed.front().volumes.size() * (raw ? 256 : 512));
  bool first = true;
  auto append = [&](const std::string& name, const VolumeDriver& driver,
                    const VolumeListing& listing) {
    body.append(first ? "\n\t" : ",\n\t");
    first = false;
    gojson::AppendGoQuoted(body, name);
    body.append(": ");
    const std::string& rendered = raw ? listing.info_json : listing.response_json;
    if (!rendered.empty()) {
      body.append(rendered);
    } else if (raw) {
      AppendInfo(body, listing.info, driver.Name(), 1);
    } else {
      AppendVolumeResponse(body, name, driver.Name(), listing, 1);
    }
  };
  if (listed.size() == 1) {
    for (const auto& [name, listing] : listed.front().volumes) {
      append(name, *listed.front().driver, *listing);
    }
  } else {
    // Names are global: with several drivers, the first that lists a name has it.
    std::map<std::string, std::pair<const VolumeDriver*, const VolumeListing*>> all;
    for (const auto& [driver, volumes] : listed) {
      for (const auto& [name, listing] : volumes)
        all.emplace(name, std::pair(driver, listing.get()));
    }
    for (const auto& [name, entry] : all) append(name, *entry.first, *entry.second);
  }
  body.append("\n}");
  return GoText(std::move(body));
}

Response ConvoyDaemon::VolumeInspect(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kVolumeInspect);
  return WithVolume(req.String("VolumeName"), VolumeNotFound,
                    [&](const std::string& name, VolumeDriver& driver) {
                      VolumeListing listing;
                      listing.info = *driver.VolumeInfo(name);
                      listing.snapshots = driver.Snapshots(name);
                      return GoText(VolumeResponse(name, driver, listing));
                    });
}

std::string ConvoyDaemon::CreateVolume(CreateRequest request, const std::string& driver_name) {
  VolumeDriver* driver = FindDriver(driver_name);
  if (driver == nullptr) throw ConvoyError("Cannot find driver " + driver_name);
  driver->Create(request);
  std::lock_guard lock(index_mutex_);
  name_index_[request.name] = true;
  return request.name;
}

Response ConvoyDaemon::VolumeCreate(const std::string& body) {
  gojson::GoValues req = Decode(body, config_.stock ? api::kVolumeCreateStock : api::kVolumeCreate);
  std::string name = req.String("Name");
  if (name.empty()) name = GenerateName("volume");
  NameLocks::Guard guard(volume_locks_, name);
  if (!req.String("Name").empty() && FindVolume(name) != nullptr) {
    throw ConvoyError("Volume " + name + " already exists ");
  }
  std::string driver_name = req.String("DriverName");
  if (driver_name.empty()) driver_name = config_.drivers.front();
  if (FindDriver(driver_name) == nullptr) throw ConvoyError("Cannot find driver " + driver_name);
  std::string endpoint = req.String("Endpoint");
  std::string backup_url = UnescapeBackupUrl(req.String("BackupURL"));
  if (!endpoint.empty()) {
    if (backup_url.empty()) {
      throw ConvoyError("Endpoint option can only be used when creating a volume from a backup.");
    }
    std::string scheme = backup_url.substr(0, backup_url.find(':'));
    if (scheme != "s3") {
      throw ConvoyError("Unsupported backup protocol for custom endpoint: " + scheme +
                        ". Only s3:// is supported.");
    }
  }
  CreateRequest create{.name = name,
                       .size = req.Int("Size"),
                       .backup_url = backup_url,
                       .driver_volume_id = req.String("DriverVolumeID"),
                       .type = req.String("Type"),
                       .iops = req.Int("IOPS"),
                       .prepare_for_vm = req.Bool("PrepareForVM"),
                       .fs_type = req.String("FSType")};
  CreateVolume(create, driver_name);
  spdlog::info("created volume {} with driver {}", name, driver_name);
  if (!req.Bool("Verbose")) return GoText(name);
  VolumeDriver* driver = FindDriver(driver_name);
  VolumeListing listing;
  listing.info = *driver->VolumeInfo(name);
  listing.snapshots = driver->Snapshots(name);
  return GoText(VolumeResponse(name, *driver, listing));
}

Response ConvoyDaemon::VolumeMount(const std::string& body) {
  gojson::GoValues req = Decode(body, config_.stock ? api::kVolumeMountStock : api::kVolumeMount);
  return WithVolume(req.String("VolumeName"), VolumeDoesNotExist,
                    [&](const std::string& name, VolumeDriver& driver) {
                      std::string mount_point =
                          driver.Mount({.name = name,
                                        .mount_point = req.String("MountPoint"),
                                        .read_write = req.String("ReadWrite"),
                                        .bind_mount = req.String("BindMount"),
                                        .remount = req.Bool("ReMount")});
                      spdlog::info("mounted volume {} at {}", name, mount_point);
                      if (!req.Bool("Verbose")) return GoText(mount_point);
                      nlohmann::ordered_json j = {
                          {"Name", name},      {"Driver", ""},          {"MountPoint", mount_point},
                          {"CreatedTime", ""}, {"DriverInfo", nullptr}, {"Snapshots", nullptr}};
                      return GoText(gojson::GoIndent(j));
                    });
}

Response ConvoyDaemon::VolumeUmount(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kVolumeUmount);
  return WithVolume(req.String("VolumeName"), VolumeDoesNotExist,
                    [&](const std::string& name, VolumeDriver& driver) {
                      driver.Umount(name);
                      spdlog::info("unmounted volume {}", name);
                      return Empty();
                    });
}

void ConvoyDaemon::DeleteVolume(const std::string& name, VolumeDriver& driver,
                                bool reference_only) {
  auto snapshots = driver.Snapshots(name);
  driver.Delete(name, reference_only);
  spdlog::info("deleted volume {} (reference only: {})", name, reference_only);
  std::lock_guard lock(index_mutex_);
  name_index_.erase(name);
  // Convoy forgets the snapshot names but keeps snapshot -> volume entries.
  for (const auto& [snapshot, info] : snapshots) name_index_.erase(snapshot);
}

Response ConvoyDaemon::VolumeDelete(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kVolumeDelete);
  bool reference_only = req.Bool("ReferenceOnly");
  return WithVolume(req.String("VolumeName"), VolumeNotFound,
                    [&](const std::string& name, VolumeDriver& driver) {
                      DeleteVolume(name, driver, reference_only);
                      return Empty();
                    });
}

Response ConvoyDaemon::SnapshotCreate(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kSnapshotCreate);
  std::string volume = req.String("VolumeName");
  CheckName(volume);
  std::string snapshot = req.String("Name");
  if (!snapshot.empty()) {
    CheckName(snapshot);
    if (NameTaken(snapshot)) throw ConvoyError("Snapshot name " + snapshot + " already exists");
  } else {
    snapshot = GenerateName("snapshot");
  }
  return WithVolume(volume, VolumeDoesNotExist, [&](const std::string&, VolumeDriver& driver) {
    driver.CreateSnapshot(snapshot, volume);
    {
      std::lock_guard lock(index_mutex_);
      name_index_[snapshot] = true;
      auto [it, inserted] = snapshot_volume_index_.emplace(snapshot, volume);
      if (!inserted && it->second != volume) {
        throw ConvoyError("BUG: Conflict when updating index, " + snapshot + " was mapped to " +
                          it->second + ", but " + volume + " want to be mapped too");
      }
    }
    if (!req.Bool("Verbose")) return GoText(snapshot);
    InfoMap info = *driver.SnapshotInfo(snapshot, volume);
    nlohmann::ordered_json j = {{"Name", snapshot},
                                {"VolumeName", volume},
                                {"CreatedTime", info["SnapshotCreatedAt"]},
                                {"DriverInfo", InfoJson(info, driver.Name())}};
    return GoText(gojson::GoIndent(j));
  });
}

Response ConvoyDaemon::SnapshotInspect(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kSnapshotInspect);
  std::string snapshot = req.String("SnapshotName");
  return WithSnapshotVolume(snapshot, "cannot find volume for snapshot ",
                            [&](const std::string& volume, VolumeDriver& driver) {
                              auto info = driver.SnapshotInfo(snapshot, volume);
                              if (!info) throw NoSuchSnapshot(snapshot, volume);
                              InfoMap volume_info = *driver.VolumeInfo(volume);
                              nlohmann::ordered_json j = {
                                  {"Name", snapshot},
                                  {"VolumeName", volume},
                                  {"VolumeCreatedAt", volume_info["VolumeCreatedAt"]},
                                  {"CreatedTime", (*info)["SnapshotCreatedAt"]},
                                  {"DriverInfo", InfoJson(*info, driver.Name())}};
                              return GoText(gojson::GoIndent(j));
                            });
}

Response ConvoyDaemon::SnapshotDelete(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kSnapshotDelete);
  std::string snapshot = req.String("SnapshotName");
  return WithSnapshotVolume(snapshot, "cannot find volume for snapshot ",
                            [&](const std::string& volume, VolumeDriver& driver) {
                              driver.DeleteSnapshot(snapshot, volume);
                              std::lock_guard lock(index_mutex_);
                              name_index_.erase(snapshot);
                              snapshot_volume_index_.erase(snapshot);
                              return Empty();
                            });
}

Response ConvoyDaemon::BackupCreate(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kBackupCreate);
  std::string snapshot = req.String("SnapshotName");
  return WithSnapshotVolume(snapshot, "Cannot find volume of snapshot ",
                            [&](const std::string& volume, VolumeDriver& driver) {
                              std::string url = driver.CreateBackup(
                                  snapshot, volume, UnescapeBackupUrl(req.String("URL")),
                                  req.String("Endpoint"));
                              if (req.Bool("Verbose"))
                                return GoText(gojson::GoIndent({{"URL", url}}));
                              auto amp = url.find('&');
                              if (amp != std::string::npos) url.replace(amp, 1, "\\u0026");
                              return GoText(url);
                            });
}

Response ConvoyDaemon::BackupList(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kBackupList);
  // Merged over the drivers in order; the first failure fails the listing.
  std::map<std::string, InfoMap> all;
  for (auto& d : drivers_) {
    for (auto& [url, info] :
         d->ListBackups(UnescapeBackupUrl(req.String("URL")), req.String("VolumeName"))) {
      all[url] = std::move(info);
    }
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [url, info] : all) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    for (const auto& [k, v] : info) entry[k] = v;
    j[url] = entry;
  }
  return GoText(gojson::GoIndent(j));
}

Response ConvoyDaemon::BackupInspect(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kBackupList);
  std::string url = UnescapeBackupUrl(req.String("URL"));
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : BackupDriverFor(url).InspectBackup(url)) j[k] = v;
  return GoText(gojson::GoIndent(j));
}

Response ConvoyDaemon::BackupDelete(const std::string& body) {
  gojson::GoValues req = Decode(body, api::kBackupDelete);
  std::string url = UnescapeBackupUrl(req.String("URL"));
  BackupDriverFor(url).DeleteBackup(url);
  return Empty();
}

Response ConvoyDaemon::Plugin(const std::string& route, const http::Request& request) {
  if (route == "/Plugin.Activate") return GoText(PluginJson({{"Implements", {"VolumeDriver"}}}));
  if (route == "/VolumeDriver.Capabilities") {
    return GoText(PluginJson({{"Capabilities", {{"Scope", "local"}}}}));
  }
  if (route == "/VolumeDriver.Remove" && config_.ignore_docker_delete) return GoText("{}");
  if (route == "/VolumeDriver.List") {
    nlohmann::ordered_json volumes = nlohmann::ordered_json::array();
    for (auto& d : drivers_) {
      for (const auto& [vname, listing] : d->List()) {
        nlohmann::ordered_json v = {{"Name", vname}};
        auto mp = listing->info.find("MountPoint");
        if (mp != listing->info.end() && !mp->second.empty()) v["Mountpoint"] = mp->second;
        volumes.push_back(v);
      }
    }
    if (volumes.empty()) return GoText("{}");
    return GoText(PluginJson({{"Volumes", volumes}}));
  }
  gojson::GoDecodeResult decoded = gojson::GoDecode(request.body, api::kPluginRequest);
  if (decoded.error) return PluginErr(*decoded.error);
  std::string name = decoded.values.String("Name");
  auto opts = decoded.values.StringMap("Opts");
  try {
    auto create = [&]() {
      if (!IsValidPluginName(name)) {
        throw ConvoyError("Invalid volume name " + name +
                          ". Can only contain 0-9, a-z, dash(-), underscore(_) and dot(.)");
      }
      CreateRequest r;
      r.name = name;
      if (!opts["size"].empty()) r.size = ParseSize(opts["size"]);
      if (!opts["iops"].empty()) r.iops = ParseGoAtoi(opts["iops"]);
      if (!opts["vm"].empty()) r.prepare_for_vm = ParseGoBool(opts["vm"]);
      r.backup_url = UnescapeBackupUrl(opts["backup"]);
      r.driver_volume_id = opts["id"];
      r.type = opts["type"];
      if (!config_.stock) r.fs_type = opts["fstype"];
      std::string driver = opts["driver"].empty() ? config_.drivers.front() : opts["driver"];
      if (FindDriver(driver) == nullptr) throw ConvoyError("Cannot find driver " + driver);
      if (!opts["endpoint"].empty() && r.backup_url.empty()) {
        throw ConvoyError("Endpoint option can only be used when creating a volume from a backup.");
      }
      CreateVolume(r, driver);
    };
    NameLocks::Guard guard(volume_locks_, name);
    VolumeDriver* driver = FindVolume(name);
    if (route == "/VolumeDriver.Create") {
      if (driver == nullptr) create();
      return GoText("{}");
    }
    if (route == "/VolumeDriver.Remove") {
      if (driver == nullptr) return GoText("{}");
      DeleteVolume(name, *driver, /*reference_only=*/true);
      return GoText("{}");
    }
    if (route == "/VolumeDriver.Mount") {
      if (driver == nullptr) {
        if (!config_.create_on_docker_mount) return PluginErr("Couldn't find volume.");
        create();
        driver = FindVolume(name);
      }
      MountRequest mount;
      mount.name = name;
      std::string mp = driver->Mount(mount);
      return GoText(PluginJson({{"Mountpoint", mp}}));
    }
    if (route == "/VolumeDriver.Unmount") {
      if (driver != nullptr) driver->Umount(name);
      return GoText("{}");
    }
    if (route == "/VolumeDriver.Path") {
      if (driver == nullptr) return PluginErr("Couldn't find volume.");
      std::string mp = driver->MountPoint(name);
      return GoText(mp.empty() ? "{}" : PluginJson({{"Mountpoint", mp}}));
    }
    // /VolumeDriver.Get
    if (driver == nullptr) return PluginErr("Could not find volume " + name + ".");
    nlohmann::ordered_json v = {{"Name", name}};
    std::string mp = driver->MountPoint(name);
    if (!mp.empty()) v["Mountpoint"] = mp;
    return GoText(PluginJson({{"Volume", v}}));
  } catch (const std::exception& e) {
    return PluginErr(ReplyText(e));
  }
}

}  // namespace flexkit::fakes::convoy
