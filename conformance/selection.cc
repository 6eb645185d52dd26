#include "conformance/selection.h"

#include <cstdlib>
#include <regex>
#include <stdexcept>

namespace flexkit::conform {
namespace {

std::regex Compile(const std::string& flag, const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(flag + " '" + pattern + "': " + e.what());
  }
}

int ParseInt(const std::string& what, const std::string& text) {
  std::size_t used = 0;
  int value = -1;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw std::invalid_argument(what + " '" + text + "': not a number");
  return value;
}

void SetShard(Selection& s, int index, int total, const std::string& origin) {
  if (total < 1 || index < 0 || index >= total) {
    throw std::invalid_argument(origin + ": shard index must be in [0, total) and total >= 1");
  }
  s.shard_index = index;
  s.shard_total = total;
}

}  // namespace

std::string CaseLabel(const Case& c) {
  std::string label = c.name + " ";
  for (const auto& t : c.tags) label += "[" + t + "]";
  return label;
}

std::vector<const Case*> Select(const std::vector<Case>& cases, const Selection& s) {
  const auto focus = Compile("--focus", s.focus.empty() ? "." : s.focus);
  const bool skipping = !s.skip.empty();
  const auto skip = Compile("--skip", skipping ? s.skip : "$^");
  std::vector<const Case*> matched;
  for (const auto& c : cases) {
    const std::string label = CaseLabel(c);
    if (!std::regex_search(label, focus)) continue;
    if (skipping && std::regex_search(label, skip)) continue;
    matched.push_back(&c);
  }
  std::vector<const Case*> shard;
  for (std::size_t i = 0; i < matched.size(); ++i) {
    if (static_cast<int>(i % s.shard_total) == s.shard_index) shard.push_back(matched[i]);
  }
  return shard;
}

void ParseShard(const std::string& text, Selection& s) {
  auto slash = text.find('/');
  if (slash == std::string::npos)
    throw std::invalid_argument("--shard '" + text + "': expected i/n");
  SetShard(s, ParseInt("--shard index", text.substr(0, slash)),
           ParseInt("--shard total", text.substr(slash + 1)), "--shard " + text);
}

void ShardFromEnvironment(Selection& s) {
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  if (!index || !total) return;
  SetShard(s, ParseInt("GTEST_SHARD_INDEX", index), ParseInt("GTEST_TOTAL_SHARDS", total),
           "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS");
}

}  // namespace flexkit::conform
