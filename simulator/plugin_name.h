#pragma once
// Driver names (reference §1.1): the folder name with every '~' turned into
// '/', the executable named after the last segment, and the name checked as
// VolumePluginMgr does (validation.IsQualifiedName).
#include <string>

namespace flexkit::sim {

std::string UnescapeDriverName(const std::string& dir_name);   // "foo~cifs" -> "foo/cifs"
std::string EscapeDriverName(const std::string& driver_name);  // "foo/cifs" -> "foo~cifs"
std::string ExecutableName(const std::string& driver_name);    // "foo/cifs" -> "cifs"
// Empty when valid; otherwise why IsQualifiedName refuses it.
std::string QualifiedNameError(const std::string& name);

}  // namespace flexkit::sim
