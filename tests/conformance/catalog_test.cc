// The case catalog: every failure mode covered or explained, and every
// case named once and tagged.
#include "conformance/catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace flexkit::conform {
namespace {

TEST(Catalog, EveryFailureModeIsCoveredOrExplained) {
  for (const auto& row : CoverageTable()) EXPECT_NE(row.note, "NOT COVERED") << row.failure_mode;
  EXPECT_EQ(CoverageTable().size(), 30u);
}

TEST(Catalog, NamesAreUniqueAndTagged) {
  auto cases = Catalog();
  std::set<std::string> names;
  for (const auto& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.tags.empty()) << c.name;
  }
}

}  // namespace
}  // namespace flexkit::conform
