#include "conformance/model/sequence_search.h"

#include <algorithm>
#include <deque>
#include <set>

namespace flexkit::conform::model {

Enumeration Enumerate(const VolumeModel& model, int depth) {
  Enumeration result;
  struct Node {
    State state;
    Sequence path;
  };
  std::set<State> seen = {model.Initial()};
  std::deque<Node> frontier = {Node{model.Initial(), {}}};
  while (!frontier.empty()) {
    Node node = std::move(frontier.front());
    frontier.pop_front();
    if (static_cast<int>(node.path.size()) >= depth) continue;
    for (const auto& action : model.EnabledActions(node.state)) {
      Sequence path = node.path;
      path.push_back(action);
      State next = model.Next(node.state, action);
      const bool fresh = seen.insert(next).second;
      const bool extend =
          fresh && static_cast<int>(path.size()) < depth && !model.EnabledActions(next).empty();
      if (extend) {
        frontier.push_back(Node{std::move(next), std::move(path)});
      } else {
        result.steps += path.size();
        result.sequences.push_back(std::move(path));
      }
    }
  }
  result.states = seen.size();
  return result;
}

namespace {

// splitmix64: small, fast and fully specified, so walks are reproducible.
std::uint64_t Mix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t WalkSeed(std::uint64_t run_seed, std::size_t index) { return run_seed + index; }

Sequence RandomWalk(const VolumeModel& model, int length, std::uint64_t seed) {
  Sequence walk;
  State s = model.Initial();
  std::uint64_t rng = seed;
  for (int i = 0; i < length; ++i) {
    auto enabled = model.EnabledActions(s);
    if (enabled.empty()) break;
    const auto& a = enabled[Mix(rng) % enabled.size()];
    walk.push_back(a);
    s = model.Next(s, a);
  }
  return walk;
}

Shrunk Shrink(const VolumeModel& model, Sequence failing, std::size_t failing_step,
              const FailingStep& fails, int max_runs) {
  Shrunk best;
  // Steps after the first divergence cannot matter to it.
  if (failing_step < failing.size()) failing.resize(failing_step + 1);
  best.sequence = std::move(failing);
  best.failing_step = std::min(failing_step, best.sequence.size());
  bool progress = true;
  while (progress && best.runs < max_runs) {
    progress = false;
    for (std::size_t chunk = std::max<std::size_t>(best.sequence.size() / 2, 1);
         chunk >= 1 && !progress; chunk /= 2) {
      for (std::size_t begin = 0; begin + chunk <= best.sequence.size() && best.runs < max_runs;
           ++begin) {
        Sequence candidate = best.sequence;
        candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(begin),
                        candidate.begin() + static_cast<std::ptrdiff_t>(begin + chunk));
        if (!model.Feasible(candidate)) continue;
        ++best.runs;
        if (auto step = fails(candidate)) {
          if (*step < candidate.size()) candidate.resize(*step + 1);
          best.sequence = std::move(candidate);
          best.failing_step = std::min(*step, best.sequence.size());
          progress = true;
          break;
        }
      }
      if (chunk == 1) break;
    }
  }
  ++best.runs;
  if (auto step = fails(best.sequence)) {
    best.confirmed = true;
    best.failing_step = std::min(*step, best.sequence.size());
  }
  return best;
}

}  // namespace flexkit::conform::model
