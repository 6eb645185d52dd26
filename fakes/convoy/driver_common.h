#pragma once
// What the vfs and ebs drivers share: Convoy's error texts for missing
// volumes and snapshots, the checks of the PR #161 mount options, and the
// naming of per-volume record files.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "fakes/convoy/volume_driver.h"

namespace flexkit::fakes::convoy {

// "volume X doesn't exist"
ConvoyError NoSuchVolume(const std::string& volume);
// "snapshot S of volume V doesn't exist"
ConvoyError NoSuchSnapshot(const std::string& snapshot, const std::string& volume);
// Convoy's util.VolumeMount refusal to mount a mounted volume elsewhere.
ConvoyError AlreadyMounted(const std::string& volume, const std::string& at,
                           const std::string& asked);

// ReadWrite must be "", "rw" or "ro".
void CheckReadWrite(const std::string& read_write);
// A caller's mount point must be absolute; returns it cleaned.
std::string CheckedMountPoint(const std::string& mount_point);

// Runs `work`, turning any other exception into a ConvoyError with its
// ReplyText, so that a failed mount or mkfs reaches the client as Convoy's 400.
template <typename Work>
auto AsConvoyError(Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const ConvoyError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConvoyError(ReplyText(e));
  }
}

// "read record FILE: <what is wrong with it>" (nlohmann's text is logged).
std::string RecordError(const std::string& file, const nlohmann::json::exception& e);
// Runs `read` (which parses the JSON record `file`), turning a JSON error
// into a ConvoyError that names the file and says what is wrong with it.
template <typename Read>
auto ReadRecord(const std::string& file, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw ConvoyError(RecordError(file, e));
  }
}

// The volume name of a record file `<prefix><name><suffix>` (a bare file
// name), or nullopt for any other file.
std::optional<std::string> VolumeOfRecordFile(std::string_view file, std::string_view prefix,
                                              std::string_view suffix);

}  // namespace flexkit::fakes::convoy
