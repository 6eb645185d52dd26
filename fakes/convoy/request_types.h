#pragma once
// The request structs of Convoy's api/request.go (no json tags: the JSON key
// is the Go field name), with the PR #161 extension fields; the *Stock
// variants are v0.5.2's own, where those keys are unknown and so ignored.
#include "gojson/decode.h"

namespace flexkit::fakes::convoy::api {

inline const gojson::GoStruct kVolumeCreate{"api.VolumeCreateRequest",
                                            "VolumeCreateRequest",
                                            {{"Name", gojson::GoType::kString},
                                             {"DriverName", gojson::GoType::kString},
                                             {"Size", gojson::GoType::kInt64},
                                             {"BackupURL", gojson::GoType::kString},
                                             {"Endpoint", gojson::GoType::kString},
                                             {"DriverVolumeID", gojson::GoType::kString},
                                             {"Type", gojson::GoType::kString},
                                             {"IOPS", gojson::GoType::kInt64},
                                             {"PrepareForVM", gojson::GoType::kBool},
                                             {"Verbose", gojson::GoType::kBool},
                                             {"FSType", gojson::GoType::kString}}};
inline const gojson::GoStruct kVolumeMount{"api.VolumeMountRequest",
                                           "VolumeMountRequest",
                                           {{"VolumeName", gojson::GoType::kString},
                                            {"MountPoint", gojson::GoType::kString},
                                            {"Verbose", gojson::GoType::kBool},
                                            {"ReadWrite", gojson::GoType::kString},
                                            {"BindMount", gojson::GoType::kString},
                                            {"ReMount", gojson::GoType::kBool}}};
inline const gojson::GoStruct kVolumeCreateStock{"api.VolumeCreateRequest",
                                                 "VolumeCreateRequest",
                                                 {{"Name", gojson::GoType::kString},
                                                  {"DriverName", gojson::GoType::kString},
                                                  {"Size", gojson::GoType::kInt64},
                                                  {"BackupURL", gojson::GoType::kString},
                                                  {"Endpoint", gojson::GoType::kString},
                                                  {"DriverVolumeID", gojson::GoType::kString},
                                                  {"Type", gojson::GoType::kString},
                                                  {"IOPS", gojson::GoType::kInt64},
                                                  {"PrepareForVM", gojson::GoType::kBool},
                                                  {"Verbose", gojson::GoType::kBool}}};
inline const gojson::GoStruct kVolumeMountStock{"api.VolumeMountRequest",
                                                "VolumeMountRequest",
                                                {{"VolumeName", gojson::GoType::kString},
                                                 {"MountPoint", gojson::GoType::kString},
                                                 {"Verbose", gojson::GoType::kBool}}};
inline const gojson::GoStruct kVolumeUmount{
    "api.VolumeUmountRequest", "VolumeUmountRequest", {{"VolumeName", gojson::GoType::kString}}};
inline const gojson::GoStruct kVolumeDelete{
    "api.VolumeDeleteRequest",
    "VolumeDeleteRequest",
    {{"VolumeName", gojson::GoType::kString}, {"ReferenceOnly", gojson::GoType::kBool}}};
inline const gojson::GoStruct kVolumeInspect{
    "api.VolumeInspectRequest", "VolumeInspectRequest", {{"VolumeName", gojson::GoType::kString}}};
inline const gojson::GoStruct kSnapshotCreate{"api.SnapshotCreateRequest",
                                              "SnapshotCreateRequest",
                                              {{"Name", gojson::GoType::kString},
                                               {"VolumeName", gojson::GoType::kString},
                                               {"Verbose", gojson::GoType::kBool}}};
inline const gojson::GoStruct kSnapshotDelete{"api.SnapshotDeleteRequest",
                                              "SnapshotDeleteRequest",
                                              {{"SnapshotName", gojson::GoType::kString}}};
inline const gojson::GoStruct kSnapshotInspect{"api.SnapshotInspectRequest",
                                               "SnapshotInspectRequest",
                                               {{"SnapshotName", gojson::GoType::kString}}};
inline const gojson::GoStruct kBackupList{"api.BackupListRequest",
                                          "BackupListRequest",
                                          {{"URL", gojson::GoType::kString},
                                           {"Endpoint", gojson::GoType::kString},
                                           {"VolumeName", gojson::GoType::kString},
                                           {"SnapshotName", gojson::GoType::kString}}};
inline const gojson::GoStruct kBackupCreate{"api.BackupCreateRequest",
                                            "BackupCreateRequest",
                                            {{"URL", gojson::GoType::kString},
                                             {"Endpoint", gojson::GoType::kString},
                                             {"SnapshotName", gojson::GoType::kString},
                                             {"Verbose", gojson::GoType::kBool}}};
inline const gojson::GoStruct kBackupDelete{
    "api.BackupDeleteRequest",
    "BackupDeleteRequest",
    {{"URL", gojson::GoType::kString}, {"Endpoint", gojson::GoType::kString}}};
inline const gojson::GoStruct kPluginRequest{
    "daemon.pluginRequest",
    "pluginRequest",
    {{"Name", gojson::GoType::kString}, {"Opts", gojson::GoType::kStringMap}}};

}  // namespace flexkit::fakes::convoy::api
