#include "driver/convoy/names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace convoy_flexvolume {
namespace {

using ::testing::HasSubstr;

TEST(Names, ConvoyRule) {
  for (const char* ok : {"pv-1", "ab", "a.b_c-d", "A1"}) EXPECT_TRUE(IsValidVolumeName(ok)) << ok;
  for (const char* bad : {"a", "", "..", "../x", "-a", ".a", "a b", "a/b", "caf\xc3\xa9", "a\nb"}) {
    EXPECT_FALSE(IsValidVolumeName(bad)) << bad;
  }
  EXPECT_FALSE(IsValidVolumeName(std::string(254, 'a')));
}

TEST(Names, QuotedIsBounded) {
  EXPECT_EQ(Quoted("pv-1"), "\"pv-1\"");
  const std::string q = Quoted(std::string(1 << 20, 'x'));
  EXPECT_LT(q.size(), 80u);
  EXPECT_THAT(q, HasSubstr("...\""));
}

}  // namespace
}  // namespace convoy_flexvolume
