#include "fakes/convoy/volume_json.h"

#include "gojson/encode.h"

namespace flexkit::fakes::convoy {

void AppendInfo(std::string& out, const InfoMap& info, const std::string& driver, int depth) {
  bool driver_done = false, first = true;
  auto entry = [&](const std::string& k, const std::string& v) {
    out.append(first ? "\n" : ",\n");
    first = false;
    out.append(static_cast<size_t>(depth) + 1, '\t');
    gojson::AppendGoQuoted(out, k);
    out.append(": ");
    gojson::AppendGoQuoted(out, v);
  };
  out.push_back('{');
  for (const auto& [k, v] : info) {
    if (!driver_done && k > "Driver") {
      entry("Driver", driver);
      driver_done = true;
    }
    if (k != "Driver") entry(k, v);
  }
  if (!driver_done) entry("Driver", driver);
  out.push_back('\n');
  out.append(static_cast<size_t>(depth), '\t');
  out.push_back('}');
}

namespace {

const std::string& Lookup(const InfoMap& info, const char* key) {
  static const std::string kEmpty;
  auto it = info.find(key);
  return it == info.end() ? kEmpty : it->second;
}

// Appends `"key": ` on a new line at `depth` + 1.
void AppendKey(std::string& out, std::string_view key, int depth, bool first = false) {
  out.append(first ? "\n" : ",\n");
  out.append(static_cast<size_t>(depth) + 1, '\t');
  out.push_back('"');
  out.append(key);
  out.append("\": ");
}

}  // namespace

void AppendVolumeResponse(std::string& out, const std::string& name, const std::string& driver,
                          const VolumeListing& listing, int depth) {
  out.push_back('{');
  AppendKey(out, "Name", depth, true);
  gojson::AppendGoQuoted(out, name);
  AppendKey(out, "Driver", depth);
  gojson::AppendGoQuoted(out, driver);
  AppendKey(out, "MountPoint", depth);
  gojson::AppendGoQuoted(out, Lookup(listing.info, "MountPoint"));
  AppendKey(out, "CreatedTime", depth);
  gojson::AppendGoQuoted(out, Lookup(listing.info, "VolumeCreatedAt"));
  AppendKey(out, "DriverInfo", depth);
  AppendInfo(out, listing.info, driver, depth + 1);
  AppendKey(out, "Snapshots", depth);
  if (listing.snapshots.empty()) {
    out.append("{}");
  } else {
    out.push_back('{');
    bool first = true;
    for (const auto& [sname, sinfo] : listing.snapshots) {
      out.append(first ? "\n" : ",\n");
      first = false;
      out.append(static_cast<size_t>(depth) + 2, '\t');
      gojson::AppendGoQuoted(out, sname);
      out.append(": {");
      AppendKey(out, "Name", depth + 2, true);
      gojson::AppendGoQuoted(out, sname);
      AppendKey(out, "CreatedTime", depth + 2);
      gojson::AppendGoQuoted(out, Lookup(sinfo, "SnapshotCreatedAt"));
      AppendKey(out, "DriverInfo", depth + 2);
      AppendInfo(out, sinfo, driver, depth + 3);
      out.push_back('\n');
      out.append(static_cast<size_t>(depth) + 2, '\t');
      out.push_back('}');
    }
    out.push_back('\n');
    out.append(static_cast<size_t>(depth) + 1, '\t');
    out.push_back('}');
  }
  out.push_back('\n');
  out.append(static_cast<size_t>(depth), '\t');
  out.push_back('}');
}

}  // namespace flexkit::fakes::convoy
