#pragma once
// Which sequences of the model to run and how to shrink a failing one:
// a depth-bounded enumeration pruned by abstract-state equivalence, seeded
// random walks, and a delta-debugging shrinker. Driver-independent: the
// shrinker only sees a predicate that runs a sequence.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "conformance/model/volume_model.h"

namespace flexkit::conform::model {

// Every feasible sequence of at most `depth` steps, pruned: a prefix is
// extended only from the first (shortest, in breadth-first order) prefix
// reaching its abstract state. What is returned are the maximal sequences
// of that tree, so each explored step is run at least once and a prefix
// is never run on its own.
struct Enumeration {
  std::vector<Sequence> sequences;
  std::size_t states = 0;  // distinct abstract states reached
  std::size_t steps = 0;   // total steps over all sequences
};
Enumeration Enumerate(const VolumeModel& model, int depth);

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
