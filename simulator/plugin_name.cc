#include "simulator/plugin_name.h"

#include <cctype>

namespace flexkit::sim {
namespace {

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63.
std::string NamePartError(const std::string& s) {
  if (s.empty()) return "name part must be non-empty";
  if (s.size() > 63) return "name part must be no more than 63 characters";
  for (char c : s) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') {
      return "name part must consist of alphanumeric characters, '-', '_' or '.'";
    }
  }
  if (!Alnum(s.front()) || !Alnum(s.back())) {
    return "name part must start and end with an alphanumeric character";
  }
  return "";
}

// DNS-1123 subdomain: lowercase labels of [a-z0-9-] joined by '.', ≤253.
std::string PrefixError(const std::string& s) {
  if (s.empty()) return "prefix part must be non-empty";
  if (s.size() > 253) return "prefix part must be no more than 253 characters";
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t dot = s.find('.', start);
    std::string label = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (label.empty()) return "prefix part must be a lowercase DNS subdomain";
    for (char c : label) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
        return "prefix part must be a lowercase DNS subdomain";
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return "prefix part must be a lowercase DNS subdomain";
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return "";
}

}  // namespace

std::string UnescapeDriverName(const std::string& dir_name) {
  std::string s = dir_name;
  for (auto& c : s) {
    if (c == '~') c = '/';
  }
  return s;
}

std::string EscapeDriverName(const std::string& driver_name) {
  std::string s = driver_name;
  for (auto& c : s) {
    if (c == '/') c = '~';
  }
  return s;
}

std::string ExecutableName(const std::string& driver_name) {
  auto slash = driver_name.rfind('/');
  return slash == std::string::npos ? driver_name : driver_name.substr(slash + 1);
}

std::string QualifiedNameError(const std::string& name) {
  auto slash = name.find('/');
  if (slash == std::string::npos) return NamePartError(name);
  if (name.find('/', slash + 1) != std::string::npos) {
    return "a qualified name must consist of an optional DNS subdomain prefix, '/' and a name";
  }
  if (auto e = PrefixError(name.substr(0, slash)); !e.empty()) return e;
  return NamePartError(name.substr(slash + 1));
}

}  // namespace flexkit::sim
