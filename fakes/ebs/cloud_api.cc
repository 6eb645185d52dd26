#include "fakes/ebs/cloud_api.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdint>
#include <string_view>
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

http::Response Ec2ErrorResponse(const std::string& code, const std::string& message,
                                int status = 400) {
  return Json({{"Error", {{"Code", code}, {"Message", message}}}}, status);
}

const char* JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::object:
      return "an object";
    default:
      return "null";
  }
}

// The fields of a request body, read with EC2's errors: a field of the
// wrong type is InvalidParameterValue naming the field and the type it
// must have; a required field that is absent or null is MissingParameter.
// Absent (or null) optional fields take their default.
class Params {
 public:
  explicit Params(const nlohmann::json& body) : body_(body) {}

  std::string String(const char* key, const std::string& fallback = "") const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) Invalid(key, *v, "a string");
    return v->get<std::string>();
  }
  std::string RequiredString(const char* key) const {
    std::string s = String(key);
    if (s.empty())
      throw Ec2Error("MissingParameter",
                     std::string("The request must contain the parameter ") + key);
    return s;
  }
  int64_t Int(const char* key, int64_t fallback = 0) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      Invalid(key, *v, "an integer below 2^63");
    }
    if (v->is_number_integer()) return v->get<int64_t>();
    if (v->is_number_float()) {
      double d = v->get<double>();
      if (std::trunc(d) == d && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
    }
    Invalid(key, *v, "an integer");
  }
  double Number(const char* key, double fallback) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number()) Invalid(key, *v, "a number");
    return v->get<double>();
  }
  bool Bool(const char* key, bool fallback = false) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) Invalid(key, *v, "a boolean");
    return v->get<bool>();
  }
  std::vector<std::string> Strings(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return {};
    if (!v->is_array()) Invalid(key, *v, "an array of strings");
    std::vector<std::string> out;
    for (const auto& item : *v) {
      if (!item.is_string()) Invalid(key, *v, "an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  std::map<std::string, std::string> StringMap(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return {};
    if (!v->is_object()) Invalid(key, *v, "an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [k, item] : v->items()) {
      if (!item.is_string()) Invalid(key, *v, "an object of strings");
      out[k] = item.get<std::string>();
    }
    return out;
  }

 private:
  const nlohmann::json* Find(const char* key) const {
    auto it = body_.find(key);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] static void Invalid(const char* key, const nlohmann::json& value,
                                   const char* expected) {
    std::string shown = value.dump();
    if (shown.size() > 64) shown = shown.substr(0, 61) + "...";
    std::string got = value.is_number() ? "this number" : JsonTypeName(value);
    throw Ec2Error("InvalidParameterValue", "Value (" + shown + ") for parameter " + key +
                                                " is invalid: expected " + expected + ", not " +
                                                got + ".");
  }

  const nlohmann::json& body_;
};

// What a route's handler gets: the body's fields, whether an injected
// fault makes the transitions it starts stuck, and the instance id of
// /admin/instances/<id>/<action>.
struct RouteCall {
  Cloud& cloud;
  const Params& body;
  bool stuck = false;
  std::string instance;
};

using Handler = http::Response (*)(RouteCall&);

struct Route {
  Handler handler;
  bool ec2 = false;  // an EC2 operation: faults apply, named by the path after /ec2/
};

http::Response SetInstanceState(RouteCall& c, const std::string& state) {
  c.cloud.SetInstanceState(c.instance, state);
  return Json({{"InstanceId", c.instance}, {"State", state}});
}

// "METHOD path" -> handler; /admin/instances/<id>/<action> is keyed with `*` for the id.
const std::map<std::string, Route>& Routes() {
  static const std::map<std::string, Route> routes = {
      {"POST /ec2/CreateVolume",
       {[](RouteCall& c) {
          return Json(c.cloud.CreateVolume(c.body.Int("Size"), c.body.String("VolumeType"),
                                           c.body.Int("Iops"), c.body.String("AvailabilityZone"),
                                           c.stuck, c.body.String("SnapshotId")));
        },
        true}},
      {"POST /ec2/DescribeVolumes",
       {[](RouteCall& c) {
          return Json({{"Volumes", c.cloud.DescribeVolumes(c.body.Strings("VolumeIds"),
                                                           c.body.String("AttachedTo"))}});
        },
        true}},
      {"POST /ec2/AttachVolume",
       {[](RouteCall& c) {
          return Json(c.cloud.AttachVolume(c.body.RequiredString("VolumeId"),
                                           c.body.RequiredString("InstanceId"),
                                           c.body.String("Device"), c.stuck));
        },
        true}},
      {"POST /ec2/DetachVolume",
       {[](RouteCall& c) {
          return Json(c.cloud.DetachVolume(c.body.RequiredString("VolumeId"),
                                           c.body.String("InstanceId"), c.body.Bool("Force"),
                                           c.stuck));
        },
        true}},
      {"POST /ec2/DeleteVolume",
       {[](RouteCall& c) {
          c.cloud.DeleteVolume(c.body.RequiredString("VolumeId"));
          return Json(nlohmann::json::object());
        },
        true}},
      {"POST /ec2/DescribeInstances",
       {[](RouteCall& c) {
          return Json({{"Instances", c.cloud.DescribeInstances(c.body.Strings("InstanceIds"))}});
        },
        true}},
      {"POST /ec2/CreateSnapshot",
       {[](RouteCall& c) {
          return Json(c.cloud.CreateSnapshot(c.body.RequiredString("VolumeId"),
                                             c.body.String("Description"), c.body.StringMap("Tags"),
                                             c.stuck));
        },
        true}},
      {"POST /ec2/DescribeSnapshots",
       {[](RouteCall& c) {
          return Json({{"Snapshots", c.cloud.DescribeSnapshots(c.body.Strings("SnapshotIds"),
                                                               c.body.String("VolumeId"))}});
        },
        true}},
      {"POST /ec2/DeleteSnapshot",
       {[](RouteCall& c) {
          c.cloud.DeleteSnapshot(c.body.RequiredString("SnapshotId"));
          return Json(nlohmann::json::object());
        },
        true}},
      {"GET /admin/state", {[](RouteCall& c) { return Json(c.cloud.State()); }}},
      {"GET /admin/violations", {[](RouteCall& c) {
         return Json({{"Violations", c.cloud.Violations()}});
       }}},
      {"POST /admin/instances",
       {[](RouteCall& c) { return Json(c.cloud.RunInstance(c.body.String("Host"))); }}},
      {"POST /admin/instances/*/start",
       {[](RouteCall& c) { return SetInstanceState(c, "running"); }}},
      {"POST /admin/instances/*/stop",
       {[](RouteCall& c) { return SetInstanceState(c, "stopped"); }}},
      {"POST /admin/instances/*/terminate",
       {[](RouteCall& c) { return SetInstanceState(c, "terminated"); }}},
      {"POST /admin/faults", {[](RouteCall& c) {
         std::string op = c.body.RequiredString("Operation");
         Fault f;
         f.latency_ms = c.body.Int("LatencyMs", 0);
         f.error_code = c.body.String("ErrorCode");
         f.error_rate = c.body.Number("ErrorRate", 1.0);
         f.count = c.body.Int("Count", -1);
         f.stuck = c.body.Bool("Stuck");
         f.drop_connection = c.body.Bool("DropConnection");
         c.cloud.SetFault(op, f);
         return Json({{"Operation", op}});
       }}},
      {"DELETE /admin/faults", {[](RouteCall& c) {
         c.cloud.ClearFaults();
         return Json(nlohmann::json::object());
       }}},
  };
  return routes;
}

// The route key of a request, and the instance id it names, if any.
std::string RouteKey(const http::Request& request, std::string& instance) {
  constexpr std::string_view kInstances = "/admin/instances/";
  const std::string& path = request.path;
  if (path.starts_with(kInstances)) {
    std::string rest = path.substr(kInstances.size());
    auto slash = rest.find('/');
    if (slash != std::string::npos) {
      instance = rest.substr(0, slash);
      return request.method + " " + std::string(kInstances) + "*" + rest.substr(slash);
    }
  }
  return request.method + " " + path;
}

// The body as a JSON object ({} when empty), or MalformedInput saying why not.
nlohmann::json ParseBody(const std::string& body) {
  if (body.empty()) return nlohmann::json::object();
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    throw Ec2Error("MalformedInput",
                   "the request body is not valid JSON (at byte " + std::to_string(e.byte) + ")");
  }
  if (!parsed.is_object()) {
    throw Ec2Error("MalformedInput", std::string("the request body is ") + JsonTypeName(parsed) +
                                         ", not a JSON object");
  }
  return parsed;
}

}  // namespace

http::Response HandleCloudRequest(Cloud& cloud, const http::Request& request) {
  try {
    nlohmann::json body = ParseBody(request.body);
    std::string instance;
    auto route = Routes().find(RouteKey(request, instance));
    if (route == Routes().end()) {
      return Ec2ErrorResponse("InvalidAction",
                              "no such route: " + request.method + " " + request.path, 404);
    }
    Params params(body);
    RouteCall call{cloud, params, false, instance};
    if (route->second.ec2) {
      std::string op = request.path.substr(5);
      if (std::optional<Fault> fault = cloud.TakeFault(op)) {
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
        call.stuck = fault->stuck;
      }
    }
    return route->second.handler(call);
  } catch (const Ec2Error& e) {
    spdlog::info("{} {}: {} {}", request.method, request.path, e.code, e.what());
    return Ec2ErrorResponse(e.code, e.what());
  } catch (const std::exception& e) {
    return Ec2ErrorResponse("InternalError", ReplyText(e), 500);
  }
}

}  // namespace flexkit::fakes::ebs
