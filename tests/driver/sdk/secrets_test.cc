#include "driver/sdk/secrets.h"

#include <gtest/gtest.h>

namespace flexvolume {
namespace {

TEST(SecretRegistry, LongerSecretsAreRedactedWhole) {
  SecretRegistry r;
  r.Add("abc");
  r.Add("abcdef");
  r.Add("");
  EXPECT_EQ(r.Redact("xabcdefx abc"), "x<redacted>x <redacted>");
}

TEST(SecretRegistry, SecretInsideTheMarkerDoesNotLoop) {
  SecretRegistry r;
  r.Add("red");
  EXPECT_EQ(r.Redact("red"), "<redacted>");
}

}  // namespace
}  // namespace flexvolume
