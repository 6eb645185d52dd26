#include "conformance/selection.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace flexkit::conform {
namespace {

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const auto& [name, tag] :
       std::vector<std::pair<std::string, std::string>>{{"protocol/a", "protocol"},
                                                        {"lifecycle/b", "lifecycle"},
                                                        {"secrets/c", "secrets"},
                                                        {"secrets/d", "secrets"}}) {
    cases.push_back({name, {tag}, {}, Always, [](CaseContext&) {}});
  }
  return cases;
}

std::vector<std::string> Names(const std::vector<const Case*>& cases) {
  std::vector<std::string> out;
  for (const auto* c : cases) out.push_back(c->name);
  return out;
}

TEST(Selection, FocusMatchesNamesAndTags) {
  auto cases = Cases();
  Selection s;
  s.focus = "\\[secrets\\]";
  EXPECT_EQ(Names(Select(cases, s)), (std::vector<std::string>{"secrets/c", "secrets/d"}));
  s.focus = "^protocol/";
  EXPECT_EQ(Names(Select(cases, s)), (std::vector<std::string>{"protocol/a"}));
}

TEST(Selection, SkipRemovesMatchingNamesAndTags) {
  auto cases = Cases();
  Selection s;
  s.skip = "secrets/d|lifecycle";
  EXPECT_EQ(Names(Select(cases, s)), (std::vector<std::string>{"protocol/a", "secrets/c"}));
}

TEST(Selection, ShardsPartitionTheSelection) {
  auto cases = Cases();
  std::vector<std::string> all;
  for (int i = 0; i < 3; ++i) {
    Selection s;
    ParseShard(std::to_string(i) + "/3", s);
    for (const auto& n : Names(Select(cases, s))) all.push_back(n);
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"lifecycle/b", "protocol/a", "secrets/c", "secrets/d"}));
}

TEST(Selection, BadShardAndRegexAreUsageErrors) {
  Selection s;
  EXPECT_THROW(ParseShard("3/3", s), std::invalid_argument);
  EXPECT_THROW(ParseShard("1", s), std::invalid_argument);
  EXPECT_THROW(ParseShard("a/2", s), std::invalid_argument);
  s.focus = "([";
  auto cases = Cases();
  EXPECT_THROW(Select(cases, s), std::invalid_argument);
}

TEST(Selection, GoogleTestShardVariablesAreHonoured) {
  ::setenv("GTEST_SHARD_INDEX", "1", 1);
  ::setenv("GTEST_TOTAL_SHARDS", "2", 1);
  Selection s;
  ShardFromEnvironment(s);
  ::unsetenv("GTEST_SHARD_INDEX");
  ::unsetenv("GTEST_TOTAL_SHARDS");
  auto cases = Cases();
  EXPECT_EQ(Names(Select(cases, s)), (std::vector<std::string>{"lifecycle/b", "secrets/d"}));
}

}  // namespace
}  // namespace flexkit::conform
