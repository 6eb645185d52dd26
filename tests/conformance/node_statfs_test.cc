#include "conformance/node_statfs.h"

#include <gtest/gtest.h>

namespace {

using flexkit::conform::ParseSizeOption;

TEST(ParseSizeOption, ReadsEachSuffixAsTheSmallestValueItCouldMean) {
  EXPECT_EQ(ParseSizeOption("1048576"), 1048576u);
  EXPECT_EQ(ParseSizeOption("64m"), 64000000u);
  EXPECT_EQ(ParseSizeOption("64M"), 64000000u);
  EXPECT_EQ(ParseSizeOption("320Mi"), 320u << 20);
  EXPECT_EQ(ParseSizeOption("2Gi"), 2ull << 30);
  EXPECT_EQ(ParseSizeOption("1G"), 1000000000u);
}

TEST(ParseSizeOption, RefusesWhatIsNotASize) {
  EXPECT_FALSE(ParseSizeOption(""));
  EXPECT_FALSE(ParseSizeOption("Mi"));
  EXPECT_FALSE(ParseSizeOption("-1"));
  EXPECT_FALSE(ParseSizeOption("10 Mi"));
  EXPECT_FALSE(ParseSizeOption("10Qi"));
  EXPECT_FALSE(ParseSizeOption("9999999999999999999")) << "too many digits to be a size";
}

}  // namespace
