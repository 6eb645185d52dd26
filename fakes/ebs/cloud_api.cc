#include "fakes/ebs/cloud_api.h"

#include <spdlog/spdlog.h>

#include <thread>

namespace flexkit::fakes::ebs {
namespace {

http::Response Json(const nlohmann::json& j, int status = 200) {
  http::Response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = j.dump() + "\n";
  return r;
}

http::Response Ec2ErrorResponse(const std::string& code, const std::string& message) {
  return Json({{"Error", {{"Code", code}, {"Message", message}}}}, 400);
}

std::vector<std::string> Strings(const nlohmann::json& body, const char* key) {
  if (!body.contains(key)) return {};
  return body[key].get<std::vector<std::string>>();
}

}  // namespace

http::Response HandleCloudRequest(Cloud& cloud, const http::Request& request) {
  const std::string& path = request.path;
  nlohmann::json body = nlohmann::json::object();
  if (!request.body.empty()) {
    body = nlohmann::json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return Ec2ErrorResponse("MalformedInput", "the request body is not a JSON object");
    }
  }
  try {
    if (path.rfind("/ec2/", 0) == 0 && request.method == "POST") {
      std::string op = path.substr(5);
      std::optional<Fault> fault = cloud.TakeFault(op);
      if (fault) {
        if (fault->latency_ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(fault->latency_ms));
        if (fault->drop_connection) {
          http::Response r;
          r.drop_connection = true;
          return r;
        }
        if (!fault->error_code.empty()) {
          return Ec2ErrorResponse(fault->error_code, "Injected fault on " + op);
        }
      }
      bool stuck = fault && fault->stuck;
      if (op == "CreateVolume") {
        return Json(cloud.CreateVolume(body.value("Size", int64_t{0}), body.value("VolumeType", ""),
                                       body.value("Iops", int64_t{0}),
                                       body.value("AvailabilityZone", ""), stuck,
                                       body.value("SnapshotId", "")));
      }
      if (op == "DescribeVolumes") {
        return Json({{"Volumes", cloud.DescribeVolumes(Strings(body, "VolumeIds"),
                                                       body.value("AttachedTo", ""))}});
      }
      if (op == "AttachVolume") {
        return Json(cloud.AttachVolume(body.value("VolumeId", ""), body.value("InstanceId", ""),
                                       body.value("Device", ""), stuck));
      }
      if (op == "DetachVolume") {
        return Json(cloud.DetachVolume(body.value("VolumeId", ""), body.value("InstanceId", ""),
                                       body.value("Force", false), stuck));
      }
      if (op == "DeleteVolume") {
        cloud.DeleteVolume(body.value("VolumeId", ""));
        return Json(nlohmann::json::object());
      }
      if (op == "DescribeInstances") {
        return Json({{"Instances", cloud.DescribeInstances(Strings(body, "InstanceIds"))}});
      }
      if (op == "CreateSnapshot") {
        return Json(cloud.CreateSnapshot(
            body.value("VolumeId", ""), body.value("Description", ""),
            body.value("Tags", std::map<std::string, std::string>{}), stuck));
      }
      if (op == "DescribeSnapshots") {
        return Json({{"Snapshots", cloud.DescribeSnapshots(Strings(body, "SnapshotIds"),
                                                           body.value("VolumeId", ""))}});
      }
      if (op == "DeleteSnapshot") {
        cloud.DeleteSnapshot(body.value("SnapshotId", ""));
        return Json(nlohmann::json::object());
      }
    }
    if (path == "/admin/state" && request.method == "GET") return Json(cloud.State());
    if (path == "/admin/violations" && request.method == "GET") {
      return Json({{"Violations", cloud.Violations()}});
    }
    if (path == "/admin/instances" && request.method == "POST") {
      return Json(cloud.RunInstance(body.value("Host", "")));
    }
    if (path.rfind("/admin/instances/", 0) == 0 && request.method == "POST") {
      std::string rest = path.substr(17);
      auto slash = rest.find('/');
      if (slash != std::string::npos) {
        std::string id = rest.substr(0, slash), action = rest.substr(slash + 1);
        std::string state = action == "start"       ? "running"
                            : action == "stop"      ? "stopped"
                            : action == "terminate" ? "terminated"
                                                    : "";
        if (!state.empty()) {
          cloud.SetInstanceState(id, state);
          return Json({{"InstanceId", id}, {"State", state}});
        }
      }
    }
    if (path == "/admin/faults" && request.method == "POST") {
      Fault f;
      f.latency_ms = body.value("LatencyMs", int64_t{0});
      f.error_code = body.value("ErrorCode", "");
      f.error_rate = body.value("ErrorRate", 1.0);
      f.count = body.value("Count", int64_t{-1});
      f.stuck = body.value("Stuck", false);
      f.drop_connection = body.value("DropConnection", false);
      std::string op = body.value("Operation", "");
      if (op.empty()) return Ec2ErrorResponse("MissingParameter", "Operation is required");
      cloud.SetFault(op, f);
      return Json({{"Operation", op}});
    }
    if (path == "/admin/faults" && request.method == "DELETE") {
      cloud.ClearFaults();
      return Json(nlohmann::json::object());
    }
  } catch (const Ec2Error& e) {
    spdlog::info("{} {}: {} {}", request.method, path, e.code, e.what());
    return Ec2ErrorResponse(e.code, e.what());
  } catch (const nlohmann::json::exception& e) {
    return Ec2ErrorResponse("InvalidParameterValue", std::string("bad field type: ") + e.what());
  }
  return Json(
      {{"Error",
        {{"Code", "InvalidAction"}, {"Message", "no such route: " + request.method + " " + path}}}},
      404);
}

}  // namespace flexkit::fakes::ebs
