// The profile keys of failover on any driver (storage, the command
// fixture's hooks) and the `attachments` hook's output format.
#include "conformance/command_fixture.h"

#include <gtest/gtest.h>

#include "conformance/profile.h"

namespace flexkit::conform {
namespace {

TEST(CommandFixtureProfile, ParsesHooksStorageAndHookTimeout) {
  auto p = ParseProfile(R"(driver: /bin/d
storage: shared
fixture:
  kind: command
  setup: 'true'
  crash: stop {{node}}
  attachments: list
  hookTimeout: 5s
)",
                        "p.yaml", "");
  EXPECT_EQ(p.storage, "shared");
  EXPECT_EQ(p.fixture.hooks.at("crash"), "stop {{node}}");
  EXPECT_EQ(p.fixture.hook_timeout, std::chrono::seconds(5));
  EXPECT_TRUE(FixtureHas(p.fixture, "attachments"));
  EXPECT_FALSE(FixtureHas(p.fixture, "partition"));
  FixtureSpec convoy;
  convoy.kind = "convoy-fake";
  EXPECT_TRUE(FixtureHas(convoy, "partition"));
  EXPECT_FALSE(FixtureHas(FixtureSpec{}, "crash"));
}

TEST(CommandFixtureProfile, RefusesBadStorageAndHooksOutsideACommandFixture) {
  EXPECT_THROW(ParseProfile("driver: /bin/d\nstorage: nfs\n", "p.yaml", ""), std::runtime_error);
  EXPECT_THROW(ParseProfile("driver: /bin/d\nfixture: {kind: none, crash: x}\n", "p.yaml", ""),
               std::runtime_error);
  EXPECT_THROW(
      ParseProfile("driver: /bin/d\nfixture: {kind: command, setup: x, crashh: y}\n", "p.yaml", ""),
      std::runtime_error);
}

TEST(AttachmentsHook, ParsesVolumesToNodesAndSaysWhatIsWrong) {
  auto a = ParseAttachments(R"({"vol-1": ["node-1"], "vol-2": []})");
  EXPECT_EQ(a.at("vol-1"), std::vector<std::string>{"node-1"});
  EXPECT_TRUE(a.at("vol-2").empty());
  for (const char* bad : {"not json", "[]", R"({"v": "node-1"})", R"({"v": [1]})", "{} {}"}) {
    EXPECT_THROW(ParseAttachments(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace flexkit::conform
