#pragma once
// Which sequences of the model to run and how to shrink a failing one:
// a depth-bounded transition tour over abstract states, seeded random
// walks, and a delta-debugging shrinker. Driver-independent: the
// shrinker only sees a predicate that runs a sequence.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "conformance/model/volume_model.h"

namespace flexkit::conform::model {

// Walks that between them make every call kubelet could make in every
// state reached in fewer than `depth` steps (abstract states: two prefixes
// reaching the same state are one). A transition tour, not one sequence
// per call: each walk starts on a fresh volume and takes an uncovered call
// where there is one, else the shortest way to the nearest state that
// still has one. It ends when it is back in the initial state (so each call
// on a fresh volume starts a walk of its own), after `max_length` steps
// (at least `depth`), or when nothing is left. Every call runs at least
// once, most exactly once.
struct Tour {
  std::vector<Sequence> walks;
  std::size_t states = 0;       // distinct abstract states within `depth` steps
  std::size_t transitions = 0;  // (state, call) pairs to cover
  std::size_t steps = 0;        // total steps over all walks
};
Tour TransitionTour(const VolumeModel& model, int depth, int max_length);

// A walk of `length` steps choosing uniformly among the enabled actions;
// the same seed gives the same walk on every platform (no std::
// distributions, whose output is implementation-defined).
Sequence RandomWalk(const VolumeModel& model, int length, std::uint64_t seed);
// The seed of walk `index` of a run seeded `run_seed`: `--random 1 --seed
// WalkSeed(s, i)` replays walk i alone.
std::uint64_t WalkSeed(std::uint64_t run_seed, std::size_t index);

// Runs a sequence; nullopt when it passes, else the index of the first step
// that diverged (== size() when only the teardown after it failed).
using FailingStep = std::function<std::optional<std::size_t>(const Sequence&)>;

struct Shrunk {
  Sequence sequence;
  std::size_t failing_step = 0;
  int runs = 0;            // predicate runs spent shrinking and confirming
  bool confirmed = false;  // the final sequence failed once more when rerun
};
// Cuts `failing` after its failing step, then drops chunks of steps (halves
// down to single steps) while the sequence stays feasible in the model and
// still fails, and reruns the result once to confirm it. `max_runs` bounds
// the predicate runs (each one is a real driver run).
Shrunk Shrink(const VolumeModel& model, Sequence failing, std::size_t failing_step,
              const FailingStep& fails, int max_runs = 60);

}  // namespace flexkit::conform::model
