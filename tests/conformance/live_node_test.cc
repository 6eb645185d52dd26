// The profile key liveNode and the catalog's live-node tag: what a run on
// a real cluster node (the Sonobuoy plugin, deploy/) may do.
#include <gtest/gtest.h>

#include <algorithm>

#include "conformance/catalog.h"
#include "conformance/profile.h"

namespace flexkit::conform {
namespace {

std::string Refusal(const std::string& yaml) {
  try {
    ParseProfile(yaml, "p.yaml", "/base");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

bool Tagged(const Case& c, const std::string& tag) {
  return std::find(c.tags.begin(), c.tags.end(), tag) != c.tags.end();
}

TEST(LiveNodeProfile, NamesTheScratchAreaAndMayLeaveTheDriverToTheCommandLine) {
  auto p = ParseProfile("liveNode: {scratch: /var/lib/flexconform/}\n", "p.yaml", "/base");
  EXPECT_EQ(p.live_node_scratch, "/var/lib/flexconform");
  EXPECT_EQ(p.driver, "") << "the entry point gives the installed driver with --driver";
  EXPECT_EQ(ParseProfile("driver: d\n", "p.yaml", "").live_node_scratch, "")
      << "no liveNode: not a live node";
}

TEST(LiveNodeProfile, BadValuesAreRefusedWithTheirLine) {
  EXPECT_NE(Refusal("driver: d\nliveNode:\n  scratch: /s\n  scrach: /t\n")
                .find("p.yaml:4: unknown key 'scrach' in liveNode"),
            std::string::npos);
  EXPECT_NE(Refusal("driver: d\nliveNode: {}\n").find("p.yaml:2: liveNode needs 'scratch'"),
            std::string::npos);
  EXPECT_NE(Refusal("liveNode: /s\n").find("p.yaml:1: liveNode must be a mapping"),
            std::string::npos);
  for (const char* scratch : {"relative/dir", "/", "//"}) {
    EXPECT_NE(Refusal(std::string("liveNode: {scratch: \"") + scratch + "\"}\n")
                  .find("p.yaml:1: liveNode.scratch must be an absolute path below /"),
              std::string::npos)
        << scratch;
  }
  EXPECT_NE(Refusal("nodes: 2\nliveNode: {scratch: /s}\n")
                .find("p.yaml:1: liveNode: a live node is one node, so nodes must be 1"),
            std::string::npos);
  EXPECT_NE(Refusal("fixture: convoy-fake\nliveNode: {scratch: /s}\n")
                .find("p.yaml:1: liveNode: the driver uses the node's real backend"),
            std::string::npos);
  EXPECT_EQ(Refusal("fixture: {kind: command, setup: 'true'}\nliveNode: {scratch: /s}\n"), "")
      << "a command fixture may prepare the real backend";
  EXPECT_NE(Refusal("nodes: 1\n").find("'driver' (the executable) is required"), std::string::npos)
      << "only a liveNode profile may leave out the driver";
}

TEST(LiveNodeCatalog, EveryTaggedNameIsACaseAndNoneCrashesCutsOffOrNeedsTwoNodes) {
  const auto catalog = Catalog();
  std::set<std::string> names;
  for (const auto& c : catalog) {
    names.insert(c.name);
    EXPECT_EQ(Tagged(c, kLiveNodeTag), LiveNodeCases().count(c.name) > 0) << c.name;
    if (Tagged(c, kLiveNodeTag)) {
      for (const char* unsafe : {"failover", "faults"})
        EXPECT_FALSE(Tagged(c, unsafe)) << c.name << " is tagged " << unsafe;
    }
  }
  for (const auto& name : LiveNodeCases())
    EXPECT_TRUE(names.count(name)) << name << " is in LiveNodeCases but not in the catalog";
  // These crash the node (and the agent on it) or hang its backend.
  for (const char* unsafe : {"teardown/unmount-after-node-crash", "failure/backend-unreachable"})
    EXPECT_FALSE(LiveNodeCases().count(unsafe)) << unsafe;
  EXPECT_TRUE(LiveNodeCases().count("lifecycle/mount-only"));
}

TEST(LiveNodeCatalog, AProfileWithLiveNodeSkipsTheOtherCasesSayingWhy) {
  const auto catalog = Catalog();
  std::vector<const Case*> cases;
  for (const auto& c : catalog) cases.push_back(&c);
  auto profile = ParseProfile(
      "liveNode: {scratch: /s}\nskip: {failover/mount-only-data-follows-pod: own reason}\n",
      "p.yaml", "");
  SkipCasesUnsafeOnALiveNode(profile, cases);
  EXPECT_EQ(profile.skip.count("lifecycle/mount-only"), 0u);
  EXPECT_EQ(profile.skip.at("teardown/unmount-after-node-crash"),
            "liveNode: not safe on a live node (only [live-node] cases run there)");
  EXPECT_EQ(profile.skip.at("failover/mount-only-data-follows-pod"), "own reason");

  auto not_live = ParseProfile("driver: d\n", "p.yaml", "");
  SkipCasesUnsafeOnALiveNode(not_live, cases);
  EXPECT_TRUE(not_live.skip.empty()) << "without liveNode every case may run";
}

}  // namespace
}  // namespace flexkit::conform
