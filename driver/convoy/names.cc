#include "driver/convoy/names.h"

#include <nlohmann/json.hpp>

namespace convoy_flexvolume {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool IsValidVolumeName(const std::string& name) {
  if (name.size() < 2 || name.size() > 253 || !IsAlnum(name[0])) return false;
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

bool IsSafeNodeName(const std::string& node) {
  if (node.empty() || node.size() > 253 || node == "." || node == "..") return false;
  for (char c : node) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return false;
  }
  return node.front() != '.' && node.front() != '-';
}

std::string Quoted(const std::string& value) {
  constexpr size_t kMax = 64;
  std::string shown = value.size() > kMax ? value.substr(0, kMax) : value;
  std::string out =
      nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (value.size() > kMax) out.insert(out.size() - 1, "...");
  return out;
}

}  // namespace convoy_flexvolume
