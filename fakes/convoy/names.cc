#include "fakes/convoy/names.h"

#include <ctime>
#include <random>

#include "fakes/common/files.h"

namespace flexkit::fakes::convoy {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool IsValidConvoyName(std::string_view name) {
  if (name.empty()) return true;
  if (name.size() < 2 || !IsAlnum(name[0])) return false;
  for (char c : name.substr(1)) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

bool IsValidPluginName(std::string_view name) { return !name.empty() && IsValidConvoyName(name); }

std::string GenerateName(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string out(prefix);
  out += "-";
  uint64_t bits = rng();
  for (int i = 0; i < 16; ++i) {
    out.push_back(i == 12 ? '4' : kHex[(bits >> (i * 4)) & 0xF]);  // UUID version nibble
  }
  return out;
}

bool EscapesDirectory(const std::string& dir, std::string_view name) {
  if (!name.empty() && name[0] == '/') return true;
  std::string joined = CleanPath(dir + "/" + std::string(name));
  return joined == CleanPath(dir) || !IsWithin(joined, dir);
}

std::string RubyDateNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %z %Y", &tm);
  return buf;
}

}  // namespace flexkit::fakes::convoy
