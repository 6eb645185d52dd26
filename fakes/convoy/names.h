#pragma once
// Convoy's name rules (util/util.go) and this fake's one deliberate
// exception: a name that would resolve outside the daemon's directories.
#include <string>
#include <string_view>

namespace flexkit::fakes::convoy {

// CheckName: ^[a-zA-Z0-9][a-zA-Z0-9_.-]+$ ; the empty name passes.
bool IsValidConvoyName(std::string_view name);
// The Docker plugin's stricter-looking rule (it accepts uppercase too).
bool IsValidPluginName(std::string_view name);
// GenerateName: prefix + "-" + the first 16 hex digits of a UUIDv4.
std::string GenerateName(std::string_view prefix);
// True when `dir`/`name` leaves `dir` or is `dir` itself (`..`, `../../etc`,
// `/abs`, `.`): such names are refused with "Invalid name X".
bool EscapesDirectory(const std::string& dir, std::string_view name);
// Convoy's timestamps: Go's time.RubyDate in local time.
std::string RubyDateNow();

}  // namespace flexkit::fakes::convoy
