#include "driver/sdk/mountinfo.h"

namespace flexvolume {
namespace {

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

// The kernel escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && IsOctal(field[i + 1]) &&
        IsOctal(field[i + 2]) && IsOctal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

// The kernel separates fields with exactly one space (a field the kernel
// writes empty, such as a source given as "", is an empty field).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t space = line.find(' ');
    fields.push_back(line.substr(0, space));
    if (space == std::string_view::npos) return fields;
    line.remove_prefix(space + 1);
  }
}

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool HasMountOption(std::string_view options, std::string_view option) {
  while (!options.empty()) {
    const std::size_t comma = options.find(',');
    if (options.substr(0, comma) == option) return true;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return false;
}

bool ParseMountInfo(std::string_view text, std::vector<MountEntry>* out, std::string* err) {
  std::vector<MountEntry> entries;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (line.empty()) continue;
    const auto fields = Fields(line);
    // Six fixed fields, optional fields, "-", then type, source, super options.
    std::size_t separator = 6;
    while (separator < fields.size() && fields[separator] != "-") ++separator;
    if (fields.size() < 6 || !IsNumber(fields[0]) || !IsNumber(fields[1]) ||
        fields.size() != separator + 4) {
      *err = "mountinfo line " + std::to_string(line_number) +
             " is not \"ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE "
             "SUPER-OPTIONS\": " +
             std::string(line.substr(0, 200));
      out->clear();
      return false;
    }
    MountEntry e;
    e.target = Unescape(fields[4]);
    e.options = Unescape(fields[5]);
    e.fstype = Unescape(fields[separator + 1]);
    e.source = Unescape(fields[separator + 2]);
    e.read_only = HasMountOption(e.options, "ro");
    entries.push_back(std::move(e));
  }
  *out = std::move(entries);
  return true;
}

}  // namespace flexvolume
