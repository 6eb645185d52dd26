// The reference model (conformance/model): transitions and expected
// outcomes from flexvolume-protocol §5 and §7, the transition tour,
// seeded walks and the shrinker on synthetic predicates.
#include <gtest/gtest.h>

#include <set>

#include "conformance/model/sequence_search.h"

namespace {

using namespace flexkit::conform::model;

Action A(Verb verb, int node = 0, int pod = -1) {
  Action a;
  a.verb = verb;
  a.node = node;
  a.pod = pod;
  return a;
}

VolumeModel Attachable(int nodes = 1) {
  Domain d;
  d.nodes = nodes;
  d.pods = 2;
  d.attachable = true;
  return VolumeModel(d);
}

VolumeModel MountOnly(int nodes = 1) {
  Domain d;
  d.nodes = nodes;
  d.pods = 2;
  d.attachable = false;
  return VolumeModel(d);
}

State After(const VolumeModel& m, const Sequence& s) {
  State state = m.Initial();
  for (const auto& a : s) {
    EXPECT_TRUE(m.Enabled(state, a)) << ActionName(a) << " in " << StateName(state);
    state = m.Next(state, a);
  }
  return state;
}

// One row: in the state a prefix leads to, is the verb called, and with
// which outcomes and next state.
struct Row {
  const char* reference;
  Sequence prefix;
  Action action;
  bool enabled;
  std::set<Outcome> allowed;  // when enabled
  const char* next;           // StateName after it, when enabled
};

TEST(VolumeModel, AttachableTransitionsFollowTheReference) {
  const auto m = Attachable(2);
  const Action attach1 = A(Verb::kAttach, 0), md1 = A(Verb::kMountDevice, 0);
  const Action mount_rw = A(Verb::kMount, 0, 0), mount_ro = A(Verb::kMount, 0, 1);
  const std::set<Outcome> ok = {Outcome::kSuccess};
  const std::set<Outcome> ok_or_fallback = {Outcome::kSuccess, Outcome::kNotSupported};
  const std::vector<Row> rows = {
      {"§7.1 step 3: attach", {}, attach1, true, ok_or_fallback, "node-1{attached} node-2{}"},
      {"§7.5: attach repeated on the same node",
       {attach1},
       attach1,
       true,
       ok_or_fallback,
       "node-1{attached} node-2{}"},
      {"§7.4 step 2: no attach on B while attached to A (RWO Multi-Attach)",
       {attach1},
       A(Verb::kAttach, 1),
       false,
       {},
       ""},
      {"§7.1 step 7: waitforattach only once attached",
       {},
       A(Verb::kWaitForAttach, 0),
       false,
       {},
       ""},
      {"§3.4: waitforattach Not supported echoes the device",
       {attach1},
       A(Verb::kWaitForAttach, 0),
       true,
       ok_or_fallback,
       "node-1{attached} node-2{}"},
      {"§7.1 step 9: mountdevice needs the attachment", {}, md1, false, {}, ""},
      {"§5.6/§3.4: mountdevice, kubelet formats on Not supported",
       {attach1},
       md1,
       true,
       ok_or_fallback,
       "node-1{attached,device} node-2{}"},
      {"§7.5: mountdevice repeated",
       {attach1, md1},
       md1,
       true,
       ok_or_fallback,
       "node-1{attached,device} node-2{}"},
      {"§7.1 step 10: mount needs the global mount", {attach1}, mount_rw, false, {}, ""},
      {"§3.4: attachable mount falls back to a bind mount",
       {attach1, md1},
       mount_ro,
       true,
       ok_or_fallback,
       "node-1{attached,device,pod-2} node-2{}"},
      {"§5.9 step 2: no unmountdevice while a pod mount references it",
       {attach1, md1, mount_rw},
       A(Verb::kUnmountDevice, 0),
       false,
       {},
       ""},
      {"§5.8: unmount of a mounted dir",
       {attach1, md1, mount_rw},
       A(Verb::kUnmount, 0, 0),
       true,
       ok_or_fallback,
       "node-1{attached,device} node-2{}"},
      {"§5.8/§7.5: unmount of a dir never mounted",
       {},
       A(Verb::kUnmount, 1, 1),
       true,
       ok_or_fallback,
       "node-1{} node-2{}"},
      {"§5.9: unmountdevice",
       {attach1, md1},
       A(Verb::kUnmountDevice, 0),
       true,
       ok_or_fallback,
       "node-1{attached} node-2{}"},
      {"§7.3: no detach while the device is mounted (no force detach)",
       {attach1, md1},
       A(Verb::kDetach, 0),
       false,
       {},
       ""},
      {"§5.10: detach", {attach1}, A(Verb::kDetach, 0), true, ok_or_fallback, "node-1{} node-2{}"},
      {"§7.5: detach of a never-attached volume",
       {},
       A(Verb::kDetach, 1),
       true,
       ok_or_fallback,
       "node-1{} node-2{}"},
      {"§7.4 step 4: attach on B once detached from A",
       {attach1, A(Verb::kDetach, 0)},
       A(Verb::kAttach, 1),
       true,
       ok_or_fallback,
       "node-1{} node-2{attached}"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.reference);
    const State s = After(m, row.prefix);
    ASSERT_EQ(m.Enabled(s, row.action), row.enabled) << ActionName(row.action);
    if (!row.enabled) continue;
    EXPECT_EQ(m.Expect(s, row.action).allowed, row.allowed);
    EXPECT_EQ(StateName(m.Next(s, row.action)), row.next);
  }
}

TEST(VolumeModel, IsAttachedMustTellTheTruthInBothStates) {
  const auto m = Attachable();
  const Action is = A(Verb::kIsAttached);
  auto e = m.Expect(m.Initial(), is);  // §8 item 9: a JSON bool for both states
  EXPECT_TRUE(e.check_attached);
  EXPECT_FALSE(e.attached);
  e = m.Expect(After(m, {A(Verb::kAttach)}), is);
  EXPECT_TRUE(e.attached);
  EXPECT_TRUE(e.allowed.count(Outcome::kNotSupported));  // §3.4: no change
  e = m.Expect(After(m, {A(Verb::kAttach), A(Verb::kDetach)}), is);
  EXPECT_FALSE(e.attached);
  EXPECT_TRUE(m.Expect(m.Initial(), A(Verb::kAttach)).device_required);  // §5.3
}

TEST(VolumeModel, MountOnlyDriversGetMountAndUnmountOnly) {
  const auto m = MountOnly();
  std::set<Verb> verbs;
  for (const auto& a : m.Actions()) verbs.insert(a.verb);
  EXPECT_EQ(verbs, (std::set<Verb>{Verb::kMount, Verb::kUnmount}));  // §7.2
  const Action mount_ro = A(Verb::kMount, 0, 1);
  // §3.4: the bind-mount fallback needs a global mount a mount-only driver lacks.
  EXPECT_EQ(m.Expect(m.Initial(), mount_ro).allowed, std::set<Outcome>{Outcome::kSuccess});
  const State once = After(m, {mount_ro});
  EXPECT_EQ(StateName(once), "node-1{pod-2}");
  EXPECT_TRUE(m.Enabled(once, mount_ro));  // §7.5: repeated after a kubelet restart
  EXPECT_EQ(m.Next(once, mount_ro), once);
  EXPECT_EQ(StateName(m.Next(once, A(Verb::kUnmount, 0, 1))), "node-1{}");
  EXPECT_FALSE(PodReadOnly(0));
  EXPECT_TRUE(PodReadOnly(1));
  EXPECT_EQ(ActionName(mount_ro), "mount(node-1,pod-2:ro)");
}

TEST(VolumeModel, DisabledCallsHaveNoExpectation) {
  const auto m = Attachable();
  EXPECT_THROW(m.Expect(m.Initial(), A(Verb::kMountDevice)), std::logic_error);
  EXPECT_FALSE(m.Feasible({A(Verb::kMount, 0, 0)}));
  EXPECT_TRUE(m.Feasible({A(Verb::kAttach), A(Verb::kMountDevice), A(Verb::kMount, 0, 0)}));
}

// The calls to cover, found independently of the tour: breadth-first,
// every enabled call of every state closer than `depth`.
std::set<std::pair<State, Action>> CallsWithin(const VolumeModel& m, int depth) {
  std::set<std::pair<State, Action>> calls;
  std::set<State> frontier = {m.Initial()}, seen = frontier;
  for (int d = 0; d < depth; ++d) {
    std::set<State> next_frontier;
    for (const auto& s : frontier) {
      for (const auto& a : m.EnabledActions(s)) {
        calls.insert({s, a});
        if (seen.insert(m.Next(s, a)).second) next_frontier.insert(m.Next(s, a));
      }
    }
    frontier = std::move(next_frontier);
  }
  return calls;
}

// Worked by hand: mount-only, 1 node, 2 pods, depth 2 has 12 calls to
// cover (4 in each of {}, {pod-1} and {pod-2}). A walk prefers a call
// leading to more uncovered calls, ends back at the start, and finally
// reaches the last ones the shortest way.
TEST(TransitionTour, MountOnlyDepthTwoByHand) {
  const auto m = MountOnly();
  const auto tour = TransitionTour(m, 2, 12);
  const Action m1 = A(Verb::kMount, 0, 0), m2 = A(Verb::kMount, 0, 1);
  const Action u1 = A(Verb::kUnmount, 0, 0), u2 = A(Verb::kUnmount, 0, 1);
  const std::vector<Sequence> expected = {
      {m1, m1, u2, u1}, {m2, m2, u1, u2}, {u1}, {u2}, {m1, m2, u1, m1}};
  EXPECT_EQ(tour.walks, expected);
  EXPECT_EQ(tour.transitions, 12u);
  EXPECT_EQ(tour.states, 4u);
  EXPECT_EQ(tour.steps, 14u);
}

// For every domain and depth: every call to cover is made, every walk is
// one kubelet could issue and within its length, and a call in the
// initial state is only ever a walk's first (made on a fresh volume).
TEST(TransitionTour, CoversEveryCallWithinDepthInFeasibleWalks) {
  for (const auto& m : {MountOnly(1), MountOnly(2), Attachable(1), Attachable(2)}) {
    for (int depth = 1; depth <= 6; ++depth) {
      const int max_length = 12;
      const auto tour = TransitionTour(m, depth, max_length);
      const auto want = CallsWithin(m, depth);
      std::set<std::pair<State, Action>> made;
      std::size_t steps = 0;
      for (const auto& walk : tour.walks) {
        ASSERT_FALSE(walk.empty());
        EXPECT_TRUE(m.Feasible(walk)) << SequenceName(walk);
        EXPECT_LE(walk.size(), static_cast<std::size_t>(max_length));
        State state = m.Initial();
        for (std::size_t i = 0; i < walk.size(); ++i) {
          if (i > 0) {
            EXPECT_NE(state, m.Initial()) << SequenceName(walk) << " step " << i + 1;
          }
          made.insert({state, walk[i]});
          state = m.Next(state, walk[i]);
        }
        steps += walk.size();
      }
      for (const auto& call : want) {
        EXPECT_TRUE(made.count(call)) << "depth " << depth << ": " << StateName(call.first) << " "
                                      << ActionName(call.second) << " never made";
      }
      EXPECT_EQ(tour.transitions, want.size());
      EXPECT_EQ(tour.steps, steps);
    }
  }
}

// What the tour saves against one fresh sequence per call (the old
// enumeration: 106 sequences and 316 steps for mount-only on 2 nodes at
// depth 4; 110 and 338 for attachable on 2 nodes).
TEST(TransitionTour, FewerWalksAndStepsThanOneSequencePerCall) {
  const auto mount_only = TransitionTour(MountOnly(2), 4, 12);
  EXPECT_EQ(mount_only.states, 16u);
  EXPECT_EQ(mount_only.transitions, 120u);
  EXPECT_LE(mount_only.walks.size(), 20u);
  EXPECT_LE(mount_only.steps, 150u);
  const auto attachable = TransitionTour(Attachable(2), 4, 12);
  EXPECT_EQ(attachable.states, 11u);
  EXPECT_LT(attachable.walks.size(), 110u / 2);
  EXPECT_LT(attachable.steps, 338u / 2);
}

TEST(RandomWalk, SameSeedSameWalkAndAlwaysFeasible) {
  const auto m = Attachable(2);
  const auto a = RandomWalk(m, 30, 42);
  EXPECT_EQ(a, RandomWalk(m, 30, 42));
  EXPECT_NE(a, RandomWalk(m, 30, 43));
  EXPECT_EQ(a.size(), 30u);
  EXPECT_TRUE(m.Feasible(a));
  EXPECT_EQ(WalkSeed(100, 0), 100u);
  EXPECT_NE(WalkSeed(100, 1), WalkSeed(100, 2));
}

// A synthetic defect: the second mount of pod-2 (read-only) fails.
std::optional<std::size_t> RemountOfReadOnlyFails(const Sequence& s) {
  int mounts = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].verb == Verb::kMount && s[i].pod == 1) {
      if (++mounts == 2) return i;
    } else if (s[i].verb == Verb::kUnmount && s[i].pod == 1) {
      mounts = 0;
    }
  }
  return std::nullopt;
}

TEST(Shrink, FindsTheShortestFailingSequence) {
  const auto m = Attachable();
  const Sequence walk = {A(Verb::kAttach),        A(Verb::kIsAttached),  A(Verb::kWaitForAttach),
                         A(Verb::kMountDevice),   A(Verb::kMount, 0, 0), A(Verb::kMount, 0, 1),
                         A(Verb::kUnmount, 0, 0), A(Verb::kMount, 0, 1), A(Verb::kUnmount, 0, 1),
                         A(Verb::kDetach)};
  ASSERT_TRUE(m.Feasible(walk) == false);  // detach while mounted is not a kubelet sequence
  Sequence failing(walk.begin(), walk.end() - 1);
  ASSERT_TRUE(m.Feasible(failing));
  auto step = RemountOfReadOnlyFails(failing);
  ASSERT_EQ(step, 7u);
  auto shrunk = Shrink(m, failing, *step, RemountOfReadOnlyFails);
  EXPECT_TRUE(shrunk.confirmed);
  EXPECT_EQ(SequenceName(shrunk.sequence),
            "attach(node-1) ; mountdevice(node-1) ; mount(node-1,pod-2:ro) ; "
            "mount(node-1,pod-2:ro)");
  EXPECT_EQ(shrunk.failing_step, 3u);
  EXPECT_GT(shrunk.runs, 1);
}

TEST(Shrink, KeepsTheOriginalWhenNothingSmallerFailsAndReportsFlakes) {
  const auto m = MountOnly();
  const Sequence s = {A(Verb::kMount, 0, 0), A(Verb::kUnmount, 0, 0)};
  // Fails only on exactly this sequence.
  auto exact = [&s](const Sequence& t) -> std::optional<std::size_t> {
    return t == s ? std::optional<std::size_t>(1) : std::nullopt;
  };
  auto shrunk = Shrink(m, s, 1, exact);
  EXPECT_EQ(shrunk.sequence, s);
  EXPECT_TRUE(shrunk.confirmed);
  // A failure that does not come back is not confirmed.
  auto never = [](const Sequence&) -> std::optional<std::size_t> { return std::nullopt; };
  EXPECT_FALSE(Shrink(m, s, 1, never).confirmed);
  // The run budget holds.
  int runs = 0;
  auto counting = [&runs](const Sequence& t) -> std::optional<std::size_t> {
    ++runs;
    return t.empty() ? std::nullopt : std::optional<std::size_t>(t.size() - 1);
  };
  Sequence longer(12, A(Verb::kUnmount, 0, 0));
  auto bounded = Shrink(m, longer, 11, counting, 5);
  EXPECT_LE(runs, 6);
  EXPECT_EQ(bounded.runs, runs);
}

}  // namespace
