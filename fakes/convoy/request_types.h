#pragma once
// The request structs of Convoy's api/request.go (no json tags: the JSON key
// is the Go field name), with the PR #161 extension fields; the *Stock
// variants are v0.5.2's own, where those keys are unknown and so ignored.
#include "fakes/convoy/go_json.h"

namespace flexkit::fakes::convoy::api {

inline const GoStruct kVolumeCreate{"api.VolumeCreateRequest",
                                    "VolumeCreateRequest",
                                    {{"Name", GoType::kString},
                                     {"DriverName", GoType::kString},
                                     {"Size", GoType::kInt64},
                                     {"BackupURL", GoType::kString},
                                     {"Endpoint", GoType::kString},
                                     {"DriverVolumeID", GoType::kString},
                                     {"Type", GoType::kString},
                                     {"IOPS", GoType::kInt64},
                                     {"PrepareForVM", GoType::kBool},
                                     {"Verbose", GoType::kBool},
                                     {"FSType", GoType::kString}}};
inline const GoStruct kVolumeMount{"api.VolumeMountRequest",
                                   "VolumeMountRequest",
                                   {{"VolumeName", GoType::kString},
                                    {"MountPoint", GoType::kString},
                                    {"Verbose", GoType::kBool},
                                    {"ReadWrite", GoType::kString},
                                    {"BindMount", GoType::kString},
                                    {"ReMount", GoType::kBool}}};
inline const GoStruct kVolumeCreateStock{"api.VolumeCreateRequest",
                                         "VolumeCreateRequest",
                                         {{"Name", GoType::kString},
                                          {"DriverName", GoType::kString},
                                          {"Size", GoType::kInt64},
                                          {"BackupURL", GoType::kString},
                                          {"Endpoint", GoType::kString},
                                          {"DriverVolumeID", GoType::kString},
                                          {"Type", GoType::kString},
                                          {"IOPS", GoType::kInt64},
                                          {"PrepareForVM", GoType::kBool},
                                          {"Verbose", GoType::kBool}}};
inline const GoStruct kVolumeMountStock{
    "api.VolumeMountRequest",
    "VolumeMountRequest",
    {{"VolumeName", GoType::kString}, {"MountPoint", GoType::kString}, {"Verbose", GoType::kBool}}};
inline const GoStruct kVolumeUmount{
    "api.VolumeUmountRequest", "VolumeUmountRequest", {{"VolumeName", GoType::kString}}};
inline const GoStruct kVolumeDelete{
    "api.VolumeDeleteRequest",
    "VolumeDeleteRequest",
    {{"VolumeName", GoType::kString}, {"ReferenceOnly", GoType::kBool}}};
inline const GoStruct kVolumeInspect{
    "api.VolumeInspectRequest", "VolumeInspectRequest", {{"VolumeName", GoType::kString}}};
inline const GoStruct kSnapshotCreate{
    "api.SnapshotCreateRequest",
    "SnapshotCreateRequest",
    {{"Name", GoType::kString}, {"VolumeName", GoType::kString}, {"Verbose", GoType::kBool}}};
inline const GoStruct kSnapshotDelete{
    "api.SnapshotDeleteRequest", "SnapshotDeleteRequest", {{"SnapshotName", GoType::kString}}};
inline const GoStruct kSnapshotInspect{
    "api.SnapshotInspectRequest", "SnapshotInspectRequest", {{"SnapshotName", GoType::kString}}};
inline const GoStruct kBackupList{"api.BackupListRequest",
                                  "BackupListRequest",
                                  {{"URL", GoType::kString},
                                   {"Endpoint", GoType::kString},
                                   {"VolumeName", GoType::kString},
                                   {"SnapshotName", GoType::kString}}};
inline const GoStruct kBackupCreate{"api.BackupCreateRequest",
                                    "BackupCreateRequest",
                                    {{"URL", GoType::kString},
                                     {"Endpoint", GoType::kString},
                                     {"SnapshotName", GoType::kString},
                                     {"Verbose", GoType::kBool}}};
inline const GoStruct kBackupDelete{"api.BackupDeleteRequest",
                                    "BackupDeleteRequest",
                                    {{"URL", GoType::kString}, {"Endpoint", GoType::kString}}};
inline const GoStruct kPluginRequest{"daemon.pluginRequest",
                                     "pluginRequest",
                                     {{"Name", GoType::kString}, {"Opts", GoType::kStringMap}}};

}  // namespace flexkit::fakes::convoy::api
