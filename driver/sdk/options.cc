#include "driver/sdk/options.h"

#include <nlohmann/json.hpp>

#include "driver/sdk/base64.h"
#include "driver/sdk/secrets.h"

namespace flexvolume {
namespace {

std::string_view JsonTypeName(const nlohmann::json& v) {
  // nlohmann's type_name() says "number" for all numbers; that is enough.
  return v.type_name();
}

std::string_view TrimTrailingNewlines(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool ParseOptions(std::string_view text, Options* out, std::string* err) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() quotes the bytes it last read, which may be a secret.
    *err = "options are not valid JSON (parse error at byte " + std::to_string(e.byte) +
           "); expected a JSON object of string values";
    return false;
  }
  if (!doc.is_object()) {
    *err = std::string("options must be a JSON object of string values, not ") +
           std::string(JsonTypeName(doc));
    return false;
  }
  Options parsed;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it.value().is_string()) {
      *err = "option \"" + it.key() + "\" must be a string, not " +
             std::string(JsonTypeName(it.value()));
      return false;
    }
    parsed[it.key()] = it.value().get<std::string>();
  }
  *out = std::move(parsed);
  return true;
}

bool IsSecretKey(std::string_view key) { return key.starts_with(option::kSecretPrefix); }

bool DecodeKubeSecrets(Options* opts, std::string* err) {
  Options decoded = *opts;
  for (auto& [key, value] : decoded) {
    if (!IsSecretKey(key)) continue;
    // The encoded form is as sensitive as the decoded one.
    SecretRegistry::Global().Add(value);
    std::string plain;
    if (!Base64Decode(value, &plain)) {
      *err = "secret \"" + key + "\" is not valid base64 (standard alphabet, padded)";
      return false;
    }
    plain.resize(TrimTrailingNewlines(plain).size());
    SecretRegistry::Global().Add(plain);
    value = std::move(plain);
  }
  *opts = std::move(decoded);
  return true;
}

std::optional<std::string> FsGroup(const Options& opts) {
  for (const char* key : {option::kFsGroup, option::kFsGroupLegacy}) {
    auto it = opts.find(key);
    if (it != opts.end() && !it->second.empty()) return it->second;
  }
  return std::nullopt;
}

bool IsReadOnly(const Options& opts) { return Get(opts, option::kReadWrite) == "ro"; }

std::string Get(const Options& opts, const std::string& key, std::string fallback) {
  auto it = opts.find(key);
  return it == opts.end() ? std::move(fallback) : it->second;
}

std::string RedactedOptions(const Options& opts) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : opts) j[key] = IsSecretKey(key) ? "<redacted>" : value;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flexvolume
