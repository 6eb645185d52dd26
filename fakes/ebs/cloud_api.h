#pragma once
// The cloud's HTTP API on its unix socket, JSON both ways.
//
// EC2 (what a daemon calls), POST with a JSON body:
//   /ec2/CreateVolume      {"Size": GiB, "VolumeType", "Iops", "AvailabilityZone",
//                           "SnapshotId"?}
//   /ec2/DescribeVolumes   {"VolumeIds": [...]} or {"AttachedTo": "i-..."}
//   /ec2/AttachVolume      {"VolumeId", "InstanceId", "Device"?}
//   /ec2/DetachVolume      {"VolumeId", "InstanceId"?, "Force"?}
//   /ec2/DeleteVolume      {"VolumeId"}
//   /ec2/DescribeInstances {"InstanceIds": [...]}
//   /ec2/CreateSnapshot    {"VolumeId", "Description"?, "Tags"?: {"k": "v"}}
//   /ec2/DescribeSnapshots {"SnapshotIds": [...]} or {"VolumeId"?}
//   /ec2/DeleteSnapshot    {"SnapshotId"}
// Errors: 400 {"Error": {"Code": "VolumeInUse", "Message": "..."}}; a field
// of the wrong type is InvalidParameterValue naming it and the type
// expected, a missing id MissingParameter, a body that is not a JSON object
// MalformedInput; 500 InternalError for a failure of the fake itself.
//
// Admin (tests and operators):
//   GET    /admin/state                       everything, with violations
//   POST   /admin/instances {"Host": "node-a"} the host's instance (created once)
//   POST   /admin/instances/<id>/{start,stop,terminate}
//   POST   /admin/faults {"Operation" (an EC2 operation name above, exactly), "LatencyMs",
//                         "ErrorCode", "ErrorRate", "Count", "Stuck", "DropConnection"}
//   DELETE /admin/faults
//   GET    /admin/violations
#include "fakes/ebs/cloud.h"
#include "fakes/http/message.h"

namespace flexkit::fakes::ebs {

http::Response HandleCloudRequest(Cloud& cloud, const http::Request& request);

}  // namespace flexkit::fakes::ebs
