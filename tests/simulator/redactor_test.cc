// sim::Redactor: secrets never in a transcript, ordinary text left alone.
#include "simulator/redactor.h"

#include <gtest/gtest.h>

namespace flexkit::sim {
namespace {

TEST(SimulatorRedactor, LongSecretIsRedactedWhereverItOccurs) {
  Redactor r;
  r.AddSecret("password", "hunter22");
  EXPECT_EQ(r.Apply("pw=hunter22,x"), "pw=<redacted>,x");
  EXPECT_EQ(r.Apply("xhunter22x"), "x<redacted>x");
  EXPECT_EQ(r.Apply(R"({"kubernetes.io/secret/password":"aHVudGVyMjI="})"),
            R"({"kubernetes.io/secret/password":"<redacted>"})");
  EXPECT_TRUE(r.ShortSecretNotes().empty());
}

TEST(SimulatorRedactor, OneCharacterSecretIsRedactedOnlyAsAWholeToken) {
  Redactor r;
  r.AddSecret("pin", "b");
  EXPECT_EQ(r.Apply("kubernetes"), "kubernetes");
  EXPECT_EQ(r.Apply(R"({"kubernetes.io/secret/pin":"Yg=="})"),
            R"({"kubernetes.io/secret/pin":"<redacted>"})");
  EXPECT_EQ(r.Apply("pin is b."), "pin is <redacted>.");
  EXPECT_EQ(r.Apply("b"), "<redacted>");
  ASSERT_EQ(r.ShortSecretNotes().size(), 1u);
  EXPECT_NE(r.ShortSecretNotes()[0].find("\"pin\""), std::string::npos);
  EXPECT_NE(r.ShortSecretNotes()[0].find("too short to redact safely"), std::string::npos);
}

TEST(SimulatorRedactor, ShortSecretOfPunctuationIsStillRedacted) {
  Redactor r;
  r.AddSecret("k", "%$");
  EXPECT_EQ(r.Apply("a%$b"), "a<redacted>b");  // no letters or digits to take along
}

TEST(SimulatorRedactor, SecretContainingAnotherIsRedactedWhole) {
  Redactor r;
  r.AddSecret("a", "secret");
  r.AddSecret("b", "secret-longer");
  EXPECT_EQ(r.Apply("x secret-longer y secret"), "x <redacted> y <redacted>");
}

TEST(SimulatorRedactor, SecretEscapedInADriversJsonReplyIsRedacted) {
  Redactor r;
  r.AddSecret("pw", "a\"b\\c<d");
  EXPECT_EQ(r.Apply(R"({"message":"bad a\"b\\c\u003cd"})"), R"({"message":"bad <redacted>"})");
  EXPECT_EQ(r.Apply(R"({"message":"bad a\"b\\c<d"})"), R"({"message":"bad <redacted>"})");
}

TEST(SimulatorRedactor, EmptySecretRegistersNothing) {
  Redactor r;
  r.AddSecret("k", "");
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.Apply("anything"), "anything");
}

}  // namespace
}  // namespace flexkit::sim
