#include "fakes/convoy/driver_common.h"

#include <spdlog/spdlog.h>

#include "fakes/common/files.h"

namespace flexkit::fakes::convoy {

ConvoyError NoSuchVolume(const std::string& volume) {
  return ConvoyError("volume " + volume + " doesn't exist");
}

ConvoyError NoSuchSnapshot(const std::string& snapshot, const std::string& volume) {
  return ConvoyError("snapshot " + snapshot + " of volume " + volume + " doesn't exist");
}

ConvoyError AlreadyMounted(const std::string& volume, const std::string& at,
                           const std::string& asked) {
  return ConvoyError("Volume " + volume + " was already mounted at " + at +
                     ", but asked to mount at " + asked);
}

void CheckReadWrite(const std::string& read_write) {
  if (!read_write.empty() && read_write != "rw" && read_write != "ro") {
    throw ConvoyError("Invalid ReadWrite " + read_write + ": use rw or ro");
  }
}

std::string CheckedMountPoint(const std::string& mount_point) {
  if (mount_point.empty() || mount_point[0] != '/') {
    throw ConvoyError("mount point " + mount_point + " is not an absolute path");
  }
  return CleanPath(mount_point);
}

std::string RecordError(const std::string& file, const nlohmann::json::exception& e) {
  // nlohmann's ids: 1xx parse errors, 3xx type errors.
  std::string why = e.id < 200   ? "it is not valid JSON"
                    : e.id < 400 ? "a field has another type than convoy-fake writes"
                                 : "it is not the JSON convoy-fake writes";
  spdlog::error("read record {}: {}", file, e.what());
  return "read record " + file + ": " + why;
}

std::optional<std::string> VolumeOfRecordFile(std::string_view file, std::string_view prefix,
                                              std::string_view suffix) {
  if (file.size() <= prefix.size() + suffix.size() || !file.starts_with(prefix) ||
      !file.ends_with(suffix)) {
    return std::nullopt;
  }
  return std::string(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
}

}  // namespace flexkit::fakes::convoy
