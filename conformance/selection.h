#pragma once
// Which cases run: --focus/--skip regular expressions (ECMAScript, searched
// in "name [tag][tag]...", so "\[secrets\]" selects a tag), then a shard
// i/n in GoogleTest's way (case k of the selection runs in shard k mod n).
#include <string>
#include <vector>

#include "conformance/catalog.h"

namespace flexkit::conform {

struct Selection {
  std::string focus;  // empty: everything
  std::string skip;   // empty: nothing
  int shard_index = 0;
  int shard_total = 1;
};

// "name [tag1][tag2]": what --focus and --skip are matched against.
std::string CaseLabel(const Case& c);
// Throws std::invalid_argument naming a bad regex.
std::vector<const Case*> Select(const std::vector<Case>& cases, const Selection& selection);
// "i/n" (0 <= i < n). Throws std::invalid_argument.
void ParseShard(const std::string& text, Selection& selection);
// GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS when both are set; throws when invalid.
void ShardFromEnvironment(Selection& selection);

}  // namespace flexkit::conform
