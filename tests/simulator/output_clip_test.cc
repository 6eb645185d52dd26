// A flood of driver output printed as its head and tail and its size.
#include "simulator/output_clip.h"

#include <gtest/gtest.h>

namespace flexkit::sim {
namespace {

TEST(SimulatorOutputClip, ShortTextIsKeptWhole) { EXPECT_EQ(ClipMiddle("abc", 3), "abc"); }

TEST(SimulatorOutputClip, LongTextKeepsHeadAndTailAndSaysWhatWasCut) {
  const std::string text = "HEAD" + std::string(1000, 'x') + "TAIL";
  const std::string clipped = ClipMiddle(text, 8);
  EXPECT_EQ(clipped, "HEAD\n[... 1000 of 1008 bytes cut ...]\nTAIL");
}

TEST(SimulatorOutputClip, NeverSplitsAUtf8Character) {
  // "é" is two bytes: a cut through one keeps neither of its halves.
  const std::string text = "ab\xc3\xa9" + std::string(100, 'x') + "\xc3\xa9yz";
  const std::string clipped = ClipMiddle(text, 6);
  EXPECT_EQ(clipped, "ab\n[... 104 of 108 bytes cut ...]\nyz");
}

TEST(SimulatorOutputClip, EveryStringOfADocumentIsClipped) {
  nlohmann::ordered_json doc = {{"stdout", std::string(100, 'a')},
                                {"calls", {{{"stderr", std::string(100, 'b')}}}},
                                {"exit", 3}};
  ClipLongStrings(doc, 10);
  EXPECT_NE(doc["stdout"].get<std::string>().find("90 of 100 bytes cut"), std::string::npos);
  EXPECT_NE(doc["calls"][0]["stderr"].get<std::string>().find("90 of 100 bytes cut"),
            std::string::npos);
  EXPECT_EQ(doc["exit"], 3);
}

}  // namespace
}  // namespace flexkit::sim
