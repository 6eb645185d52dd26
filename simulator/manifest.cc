#include "simulator/manifest.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace flexkit::sim {
namespace {

std::string Str(const YAML::Node& n, const std::string& fallback = "") {
  return n && !n.IsNull() ? n.as<std::string>() : fallback;
}

std::map<std::string, std::string> StringMap(const YAML::Node& n) {
  std::map<std::string, std::string> out;
  if (!n) return out;
  for (const auto& kv : n) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  return out;
}

FlexSource ParseFlex(const YAML::Node& n) {
  FlexSource f;
  f.driver = Str(n["driver"]);
  if (f.driver.empty()) throw std::runtime_error("flexVolume.driver is required");
  f.fs_type = Str(n["fsType"]);
  f.read_only = n["readOnly"] && n["readOnly"].as<bool>();
  f.options = StringMap(n["options"]);
  if (n["secretRef"]) {
    f.secret_name = Str(n["secretRef"]["name"]);
    f.secret_namespace = Str(n["secretRef"]["namespace"]);
  }
  return f;
}

Pod ParsePod(const YAML::Node& doc) {
  Pod pod;
  pod.name = Str(doc["metadata"]["name"]);
  pod.ns = Str(doc["metadata"]["namespace"], "default");
  pod.uid = Str(doc["metadata"]["uid"], "uid-" + pod.ns + "-" + pod.name);
  const YAML::Node spec = doc["spec"];
  pod.node = Str(spec["nodeName"]);
  pod.service_account = Str(spec["serviceAccountName"], "default");
  if (spec["securityContext"] && spec["securityContext"]["fsGroup"]) {
    pod.fs_group = spec["securityContext"]["fsGroup"].as<std::int64_t>();
  }
  for (const auto& v : spec["volumes"]) {
    PodVolume pv;
    pv.name = Str(v["name"]);
    if (v["flexVolume"]) {
      pv.flex = ParseFlex(v["flexVolume"]);
    } else if (v["persistentVolumeClaim"]) {
      pv.claim_name = Str(v["persistentVolumeClaim"]["claimName"]);
      pv.claim_read_only = v["persistentVolumeClaim"]["readOnly"] &&
                           v["persistentVolumeClaim"]["readOnly"].as<bool>();
    } else {
      continue;  // other volume types are not the simulator's business
    }
    pod.volumes.push_back(pv);
  }
  return pod;
}

}  // namespace

std::string Base64Decode(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    auto pos = kAlphabet.find(c);
    if (pos == std::string::npos)
      throw std::runtime_error("invalid base64 character in secret data");
    buffer = (buffer << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

Manifest ParseManifest(const std::string& yaml_text) {
  Manifest m;
  std::vector<YAML::Node> docs = YAML::LoadAll(yaml_text);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const YAML::Node& doc = docs[i];
    if (!doc || doc.IsNull()) continue;
    std::string kind = Str(doc["kind"]);
    std::string name = Str(doc["metadata"]["name"]);
    try {
      if (name.empty()) throw std::runtime_error("metadata.name is required");
      if (kind == "Pod") {
        m.pods.push_back(ParsePod(doc));
      } else if (kind == "PersistentVolume") {
        PersistentVolume pv;
        pv.name = name;
        if (!doc["spec"]["flexVolume"]) throw std::runtime_error("spec.flexVolume is required");
        pv.flex = ParseFlex(doc["spec"]["flexVolume"]);
        for (const auto& a : doc["spec"]["accessModes"])
          pv.access_modes.push_back(a.as<std::string>());
        m.pvs.push_back(pv);
      } else if (kind == "PersistentVolumeClaim") {
        PersistentVolumeClaim c;
        c.name = name;
        c.ns = Str(doc["metadata"]["namespace"], "default");
        c.volume_name = Str(doc["spec"]["volumeName"]);
        if (c.volume_name.empty())
          throw std::runtime_error("spec.volumeName is required (no provisioning)");
        m.pvcs.push_back(c);
      } else if (kind == "Secret") {
        Secret s;
        s.name = name;
        s.ns = Str(doc["metadata"]["namespace"], "default");
        s.type = Str(doc["type"], "Opaque");
        for (const auto& [k, v] : StringMap(doc["data"])) s.data[k] = Base64Decode(v);
        for (const auto& [k, v] : StringMap(doc["stringData"])) s.data[k] = v;
        m.secrets.push_back(s);
      } else if (kind == "Node") {
        NodeObject n;
        n.name = name;
        n.controller_managed_attach =
            Str(doc["metadata"]["annotations"]
                   ["volumes.kubernetes.io/controller-managed-attach-detach"],
                "true") != "false";
        m.nodes.push_back(n);
      } else {
        throw std::runtime_error("kind \"" + kind + "\" is not supported");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("manifest document " + std::to_string(i + 1) + " (" + kind + " " +
                               name + "): " + e.what());
    }
  }
  return m;
}

}  // namespace flexkit::sim
