#include "driver/convoy/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "driver/convoy/names.h"
#include "driver/sdk/file_text.h"

namespace convoy_flexvolume {
namespace {

using nlohmann::json;

// A config that is not valid; what() says why, ParseConfig adds the file.
class Invalid : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string RequireString(const json& v, const std::string& key) {
  if (!v.is_string()) throw Invalid("\"" + key + "\" must be a string, not " + v.type_name());
  return v.get<std::string>();
}

void RequireSocketPath(const std::string& path, const std::string& key) {
  if (path.empty() || path[0] != '/') throw Invalid("\"" + key + "\" must be an absolute path");
}

Config ParseDocument(const json& doc) {
  if (!doc.is_object()) throw Invalid("the top level must be a JSON object");
  Config c;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "socket") {
      c.socket = RequireString(v, key);
      RequireSocketPath(c.socket, key);
    } else if (key == "socketTemplate") {
      c.socket_template = RequireString(v, key);
      if (c.socket_template.find("{node}") == std::string::npos)
        throw Invalid("\"socketTemplate\" must contain {node}");
      RequireSocketPath(c.socket_template, key);
    } else if (key == "nodeSockets") {
      if (!v.is_object())
        throw Invalid("\"nodeSockets\" must be an object of node name to socket path");
      for (auto n = v.begin(); n != v.end(); ++n) {
        const std::string socket = RequireString(n.value(), "nodeSockets." + n.key());
        RequireSocketPath(socket, "nodeSockets." + n.key());
        c.node_sockets[n.key()] = socket;
      }
    } else if (key == "mode") {
      const std::string mode = RequireString(v, key);
      if (mode == "attach") {
        c.mode = Mode::kAttach;
      } else if (mode == "mount") {
        c.mode = Mode::kMountOnly;
      } else {
        throw Invalid("\"mode\" must be \"attach\" or \"mount\", not \"" + mode + "\"");
      }
    } else if (key == "timeouts") {
      if (!v.is_object()) throw Invalid("\"timeouts\" must be an object");
      for (auto t = v.begin(); t != v.end(); ++t) {
        std::chrono::milliseconds* target = t.key() == "connect"   ? &c.timeouts.connect
                                            : t.key() == "request" ? &c.timeouts.request
                                            : t.key() == "waitforattach"
                                                ? &c.timeouts.wait_for_attach
                                                : nullptr;
        if (target == nullptr)
          throw Invalid("unknown key \"timeouts." + t.key() +
                        "\" (known: connect, request, waitforattach)");
        const std::string duration = RequireString(t.value(), "timeouts." + t.key());
        if (!ParseDuration(duration, target)) {
          throw Invalid("\"timeouts." + t.key() +
                        "\" must be a positive duration like \"500ms\", \"5s\" or \"2m\"");
        }
      }
      if (c.timeouts.wait_for_attach >= std::chrono::minutes(10)) {
        throw Invalid("\"timeouts.waitforattach\" must be under kubelet's 10m");
      }
    } else if (key == "logFile") {
      c.log_file = RequireString(v, key);
    } else if (key == "stateDir") {
      c.state_dir = RequireString(v, key);
      if (c.state_dir.empty() || c.state_dir[0] != '/')
        throw Invalid("\"stateDir\" must be an absolute path");
    } else if (key == "api") {
      const std::string api = RequireString(v, key);
      if (api == "auto") {
        c.api = Api::kAuto;
      } else if (api == "stock") {
        c.api = Api::kStock;
      } else if (api == "extended") {
        c.api = Api::kExtended;
      } else {
        throw Invalid("\"api\" must be \"auto\", \"stock\" or \"extended\", not \"" + api + "\"");
      }
    } else {
      throw Invalid("unknown key \"" + key +
                    "\" (known: socket, nodeSockets, socketTemplate, mode, timeouts, logFile, "
                    "stateDir, api)");
    }
  }
  return c;
}

// "LINE:COLUMN" (1-based) of the byte nlohmann's parser stopped at (its
// `byte` is 1-based: the count of bytes read).
std::string JsonErrorPlace(const std::string& text, size_t byte) {
  const size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's what() without its exception id and position (given once, in
// the file:line:column form): "[json.exception.parse_error.101] parse error
// at line 3, column 1: syntax error ..." -> "syntax error ...".
std::string JsonErrorWhat(const std::string& what) {
  std::string out = what;
  if (out.rfind("[json.exception.", 0) == 0) {
    if (size_t close = out.find("] "); close != std::string::npos) out.erase(0, close + 2);
  }
  if (out.rfind("parse error", 0) == 0) {
    if (size_t colon = out.find(": "); colon != std::string::npos) out.erase(0, colon + 2);
  }
  return out;
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

Config ParseConfig(const std::string& text, const std::string& path) {
  const std::string prefix = "invalid config " + path + ": ";
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error("invalid config " + path + ":" + JsonErrorPlace(text, e.byte) +
                             ": not valid JSON: " + JsonErrorWhat(e.what()));
  }
  try {
    return ParseDocument(doc);
  } catch (const Invalid& e) {
    throw std::runtime_error(prefix + e.what());
  }
}

Config LoadConfig(const std::string& path, bool named) {
  const auto text = flexvolume::ReadFileText(path);
  if (!text) {
    if (errno == ENOENT && named) {
      throw std::runtime_error(std::string("config file ") + path + " (named by " + kConfigEnv +
                               ") does not exist; unset " + kConfigEnv + " to use " +
                               kDefaultConfigPath + " or the defaults");
    }
    if (errno == ENOENT) return Config{};
    throw std::runtime_error("cannot read config " + path + ": " + std::strerror(errno));
  }
  return ParseConfig(*text, path);
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

ConfigLocation ConfigPath() {
  const char* env = std::getenv(kConfigEnv);
  if (env != nullptr && *env != '\0') return {env, true};
  return {kDefaultConfigPath, false};
}

std::string Config::SocketForNode(const std::string& node) const {
  auto it = node_sockets.find(node);
  if (it != node_sockets.end()) return it->second;
  if (socket_template.empty()) return socket;
  if (!IsSafeNodeName(node)) {
    throw std::runtime_error("node name " + Quoted(node) +
                             " cannot be used in socketTemplate: it must be a DNS subdomain");
  }
  std::string s = socket_template;
  for (size_t pos; (pos = s.find("{node}")) != std::string::npos;) s.replace(pos, 6, node);
  return s;
}

}  // namespace convoy_flexvolume
