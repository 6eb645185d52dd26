#include "driver/convoy/convoy_http_client.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace convoy_flexvolume {
namespace {

using nlohmann::json;

constexpr int kReadOnlyAttempts = 3;
constexpr std::chrono::milliseconds kRetryPause{150};
constexpr size_t kMaxShownBody = 512;

// The daemon's error text for a message: one line, bounded.
std::string ShownBody(std::string body) {
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  if (body.size() > kMaxShownBody) body = body.substr(0, kMaxShownBody) + "...";
  for (char& c : body) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return body.empty() ? "(empty body)" : body;
}

VolumeInfo FromJson(const json& j) {
  if (!j.is_object()) throw std::runtime_error("a volume must be a JSON object");
  VolumeInfo v;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  v.name = str("Name");
  v.driver = str("Driver");
  v.mount_point = str("MountPoint");
  if (auto it = j.find("DriverInfo"); it != j.end() && it->is_object()) {
    for (auto d = it->begin(); d != it->end(); ++d) {
      if (d->is_string()) v.driver_info[d.key()] = d->get<std::string>();
    }
  }
  if (v.name.empty()) throw std::runtime_error("the volume has no Name");
  return v;
}

}  // namespace

std::string VolumeInfo::Device() const {
  auto it = driver_info.find(driver == "vfs" ? "Path" : "Device");
  return it == driver_info.end() ? std::string() : it->second;
}

bool VolumeInfo::IsAttached() const {
  auto it = driver_info.find("Attached");
  return !Device().empty() && (it == driver_info.end() || it->second != "false");
}

std::string VolumeInfo::FsType() const {
  auto it = driver_info.find("FSType");
  return it == driver_info.end() ? std::string() : it->second;
}

VolumeInfo ParseVolumeResponse(const std::string& json_text) {
  return FromJson(json::parse(json_text));
}

ConvoyHttpClient::ConvoyHttpClient(std::string socket_path,
                                   std::chrono::milliseconds connect_timeout,
                                   std::chrono::milliseconds request_timeout)
    : http_(std::move(socket_path), connect_timeout, request_timeout) {}

std::string ConvoyHttpClient::Endpoint() const { return "convoy at " + http_.socket_path(); }

// Convoy answers 404 for an unknown volume, but also for an unknown route
// and a client version mismatch: only its exact text means "no such volume".
static bool IsVolumeNotFound(const HttpReply& reply) {
  return reply.status == 404 && reply.body.rfind("Volume not found.", 0) == 0;
}

HttpReply ConvoyHttpClient::Call(const std::string& method, const std::string& path,
                                 const std::string& body, bool read_only, bool accept_not_found) {
  const std::string what = Endpoint() + ": " + method + " " + path;
  for (int attempt = 1;; ++attempt) {
    try {
      HttpReply reply = http_.Request(method, path, body);
      if (reply.status >= 400 && !(accept_not_found && IsVolumeNotFound(reply))) {
        throw ConvoyError(what + ": " + std::to_string(reply.status) + " " + ShownBody(reply.body),
                          reply.status);
      }
      return reply;
    } catch (const HttpTransportError& e) {
      const bool retry = read_only && e.kind() == HttpTransportError::Kind::kConnect &&
                         attempt < kReadOnlyAttempts;
      if (!retry) throw ConvoyError(what + ": " + e.what(), 0);
      std::this_thread::sleep_for(kRetryPause * attempt);
    }
  }
}

VolumeInfo ConvoyHttpClient::Create(const CreateRequest& r) {
  json body = {{"Name", r.name}, {"DriverName", r.driver_name},
               {"Size", r.size}, {"DriverVolumeID", r.driver_volume_id},
               {"Type", r.type}, {"IOPS", r.iops},
               {"Verbose", true}};
  if (r.extensions) body["FSType"] = r.fs_type;
  HttpReply reply = Call("POST", "/v1/volumes/create", body.dump(), false);
  try {
    return ParseVolumeResponse(reply.body);
  } catch (const std::exception& e) {
    throw ConvoyError(Endpoint() + ": POST /v1/volumes/create: unexpected reply (" + e.what() +
                          "): " + ShownBody(reply.body),
                      0);
  }
}

std::optional<VolumeInfo> ConvoyHttpClient::Inspect(const std::string& name) {
  HttpReply reply = Call("GET", "/v1/volumes/", json{{"VolumeName", name}}.dump(), true, true);
  if (IsVolumeNotFound(reply)) return std::nullopt;
  try {
    return ParseVolumeResponse(reply.body);
  } catch (const std::exception& e) {
    throw ConvoyError(Endpoint() + ": GET /v1/volumes/: unexpected reply (" + e.what() +
                          "): " + ShownBody(reply.body),
                      0);
  }
}

std::map<std::string, VolumeInfo> ConvoyHttpClient::List() {
  HttpReply reply = Call("GET", "/v1/volumes/list", "null", true);
  std::map<std::string, VolumeInfo> volumes;
  try {
    json doc = json::parse(reply.body);
    if (!doc.is_object()) throw std::runtime_error("the list must be a JSON object");
    for (auto it = doc.begin(); it != doc.end(); ++it) volumes[it.key()] = FromJson(it.value());
  } catch (const std::exception& e) {
    throw ConvoyError(Endpoint() + ": GET /v1/volumes/list: unexpected reply (" + e.what() +
                          "): " + ShownBody(reply.body),
                      0);
  }
  return volumes;
}

std::string ConvoyHttpClient::Mount(const MountRequest& r) {
  json body = {{"VolumeName", r.volume_name}, {"MountPoint", r.mount_point}, {"Verbose", false}};
  if (r.extensions) {
    body["ReadWrite"] = r.read_write;
    body["FSType"] = r.fs_type;
    body["BindMount"] = r.bind_mount;
    body["ReMount"] = r.remount;
  }
  // Non-verbose: the reply is the mount point as plain text.
  return Call("POST", "/v1/volumes/mount", body.dump(), false).body;
}

void ConvoyHttpClient::Umount(const std::string& name) {
  Call("POST", "/v1/volumes/umount", json{{"VolumeName", name}}.dump(), false);
}

bool ConvoyHttpClient::Delete(const std::string& name, bool reference_only) {
  HttpReply reply =
      Call("DELETE", "/v1/volumes/",
           json{{"VolumeName", name}, {"ReferenceOnly", reference_only}}.dump(), false, true);
  return !IsVolumeNotFound(reply);
}

ApiProbe ConvoyHttpClient::ProbeApi() {
  const std::string what =
      Endpoint() + ": POST /v1/volumes/mount {\"VolumeName\":\"\",\"ReadWrite\":0}";
  HttpReply reply;
  try {
    reply = http_.Request("POST", "/v1/volumes/mount", R"({"VolumeName":"","ReadWrite":0})");
  } catch (const HttpTransportError& e) {
    throw ConvoyError(what + ": " + e.what(), 0);
  }
  ApiProbe probe;
  probe.evidence = what + " answered " + std::to_string(reply.status) + " " + ShownBody(reply.body);
  if (reply.status == 400 && reply.body.find("ReadWrite") != std::string::npos &&
      reply.body.find("cannot unmarshal") != std::string::npos) {
    probe.kind = ApiProbe::Kind::kExtended;
  } else if (reply.status == 400 && reply.body.rfind("volume  doesn't exist", 0) == 0) {
    probe.kind = ApiProbe::Kind::kStock;
  }
  return probe;
}

std::string ConvoyHttpClient::DaemonInstance() const {
  struct stat st {};
  if (::stat(http_.socket_path().c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace convoy_flexvolume
