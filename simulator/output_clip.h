#pragma once
// Keeping a flood of driver output readable: a text over a limit keeps its
// head and tail and says how much was cut, so a 16 MiB reply prints as a
// few kilobytes that still show how it starts and ends.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace flexkit::sim {

// `text` itself when it holds at most `limit` bytes; else its first and
// last limit/2 bytes (never splitting a UTF-8 character) around
// "\n[... N of M bytes cut ...]\n".
std::string ClipMiddle(const std::string& text, std::size_t limit);

// Every string in `doc` passed through ClipMiddle.
void ClipLongStrings(nlohmann::ordered_json& doc, std::size_t limit);

}  // namespace flexkit::sim
