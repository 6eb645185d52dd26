#include "driver/convoy/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "driver/convoy/file_text.h"
#include "driver/convoy/names.h"

namespace convoy_flexvolume {
namespace {

using nlohmann::json;

bool RequireString(const json& v, const std::string& key, std::string* out, std::string* err) {
  if (!v.is_string()) {
    *err = "\"" + key + "\" must be a string, not " + v.type_name();
    return false;
  }
  *out = v.get<std::string>();
  return true;
}

bool ValidSocketPath(const std::string& path, const std::string& key, std::string* err) {
  if (path.empty() || path[0] != '/') {
    *err = "\"" + key + "\" must be an absolute path";
    return false;
  }
  return true;
}

}  // namespace

bool ParseDuration(const std::string& text, std::chrono::milliseconds* out) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return false;
  const long long n = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  if (unit == "ms") {
    *out = std::chrono::milliseconds(n);
  } else if (unit == "s") {
    *out = std::chrono::seconds(n);
  } else if (unit == "m") {
    *out = std::chrono::minutes(n);
  } else {
    return false;
  }
  return out->count() > 0;
}

bool ParseConfig(const std::string& text, const std::string& path, Config* config,
                 std::string* err) {
  auto fail = [&](const std::string& why) {
    *err = "invalid config " + path + ": " + why;
    return false;
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) return fail("the top level must be a JSON object");
  Config c;
  std::string why;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "socket") {
      if (!RequireString(v, key, &c.socket, &why) || !ValidSocketPath(c.socket, key, &why))
        return fail(why);
    } else if (key == "socketTemplate") {
      if (!RequireString(v, key, &c.socket_template, &why)) return fail(why);
      if (c.socket_template.find("{node}") == std::string::npos)
        return fail("\"socketTemplate\" must contain {node}");
      if (!ValidSocketPath(c.socket_template, key, &why)) return fail(why);
    } else if (key == "nodeSockets") {
      if (!v.is_object())
        return fail("\"nodeSockets\" must be an object of node name to socket path");
      for (auto n = v.begin(); n != v.end(); ++n) {
        std::string socket;
        if (!RequireString(n.value(), "nodeSockets." + n.key(), &socket, &why) ||
            !ValidSocketPath(socket, "nodeSockets." + n.key(), &why)) {
          return fail(why);
        }
        c.node_sockets[n.key()] = socket;
      }
    } else if (key == "mode") {
      std::string mode;
      if (!RequireString(v, key, &mode, &why)) return fail(why);
      if (mode == "attach") {
        c.mode = Mode::kAttach;
      } else if (mode == "mount") {
        c.mode = Mode::kMountOnly;
      } else {
        return fail("\"mode\" must be \"attach\" or \"mount\", not \"" + mode + "\"");
      }
    } else if (key == "timeouts") {
      if (!v.is_object()) return fail("\"timeouts\" must be an object");
      for (auto t = v.begin(); t != v.end(); ++t) {
        std::chrono::milliseconds* target = t.key() == "connect"   ? &c.timeouts.connect
                                            : t.key() == "request" ? &c.timeouts.request
                                            : t.key() == "waitforattach"
                                                ? &c.timeouts.wait_for_attach
                                                : nullptr;
        if (target == nullptr)
          return fail("unknown key \"timeouts." + t.key() +
                      "\" (known: connect, request, waitforattach)");
        std::string duration;
        if (!RequireString(t.value(), "timeouts." + t.key(), &duration, &why)) return fail(why);
        if (!ParseDuration(duration, target)) {
          return fail("\"timeouts." + t.key() +
                      "\" must be a positive duration like \"500ms\", \"5s\" or \"2m\"");
        }
      }
      if (c.timeouts.wait_for_attach >= std::chrono::minutes(10)) {
        return fail("\"timeouts.waitforattach\" must be under kubelet's 10m");
      }
    } else if (key == "logFile") {
      if (!RequireString(v, key, &c.log_file, &why)) return fail(why);
    } else if (key == "stateDir") {
      if (!RequireString(v, key, &c.state_dir, &why)) return fail(why);
      if (c.state_dir.empty() || c.state_dir[0] != '/')
        return fail("\"stateDir\" must be an absolute path");
    } else if (key == "api") {
      std::string api;
      if (!RequireString(v, key, &api, &why)) return fail(why);
      if (api == "auto") {
        c.api = Api::kAuto;
      } else if (api == "stock") {
        c.api = Api::kStock;
      } else if (api == "extended") {
        c.api = Api::kExtended;
      } else {
        return fail("\"api\" must be \"auto\", \"stock\" or \"extended\", not \"" + api + "\"");
      }
    } else {
      return fail("unknown key \"" + key +
                  "\" (known: socket, nodeSockets, socketTemplate, mode, timeouts, logFile, "
                  "stateDir, api)");
    }
  }
  *config = std::move(c);
  return true;
}

bool LoadConfig(const std::string& path, Config* config, std::string* err) {
  const auto text = ReadFileText(path);
  if (!text) {
    if (errno == ENOENT) {
      *config = Config{};
      return true;
    }
    *err = "cannot read config " + path + ": " + std::strerror(errno);
    return false;
  }
  return ParseConfig(*text, path, config, err);
}

const char* ApiName(Api api) {
  switch (api) {
    case Api::kStock:
      return "stock";
    case Api::kExtended:
      return "extended";
    case Api::kAuto:
      break;
  }
  return "auto";
}

std::string ConfigPath() {
  const char* env = std::getenv(kConfigEnv);
  return env != nullptr && *env != '\0' ? env : kDefaultConfigPath;
}

bool Config::SocketForNode(const std::string& node, std::string* socket_path,
                           std::string* err) const {
  auto it = node_sockets.find(node);
  if (it != node_sockets.end()) {
    *socket_path = it->second;
    return true;
  }
  if (!socket_template.empty()) {
    if (!IsSafeNodeName(node)) {
      *err = "node name " + Quoted(node) +
             " cannot be used in socketTemplate: it must be a DNS subdomain";
      return false;
    }
    std::string s = socket_template;
    for (size_t pos; (pos = s.find("{node}")) != std::string::npos;) s.replace(pos, 6, node);
    *socket_path = s;
    return true;
  }
  *socket_path = socket;
  return true;
}

}  // namespace convoy_flexvolume
