#include "conformance/model/sequence_search.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>

namespace flexkit::conform::model {

namespace {

using Uncovered = std::map<State, std::set<Action>>;

void MarkCovered(Uncovered& uncovered, const State& state, const Action& action) {
  auto here = uncovered.find(state);
  if (here == uncovered.end()) return;
  here->second.erase(action);
  if (here->second.empty()) uncovered.erase(here);
}

// The shortest way (breadth-first, at most `budget` steps) from `from` to
// a state with an uncovered call, not through `initial`: arriving there
// ends a walk. nullopt when there is none within the budget.
std::optional<Sequence> WayToUncovered(const VolumeModel& model, const State& from,
                                       const State& initial, const Uncovered& uncovered,
                                       std::size_t budget) {
  std::map<State, Sequence> way = {{from, {}}};
  std::deque<State> queue = {from};
  while (!queue.empty()) {
    const State s = std::move(queue.front());
    queue.pop_front();
    const Sequence path = way.at(s);
    if (path.size() >= budget) continue;
    for (const auto& a : model.EnabledActions(s)) {
      State next = model.Next(s, a);
      if (next == initial || way.count(next)) continue;
      Sequence longer = path;
      longer.push_back(a);
      if (uncovered.count(next)) return longer;
      way.emplace(next, std::move(longer));
      queue.push_back(std::move(next));
    }
  }
  return std::nullopt;
}

// splitmix64: small, fast and fully specified, so walks are reproducible.
std::uint64_t Mix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Tour TransitionTour(const VolumeModel& model, int depth, int max_length) {
  const State initial = model.Initial();
  Tour tour;
  // Breadth-first: the calls to cover are those of states closer than `depth`.
  Uncovered uncovered;
  std::map<State, int> distance = {{initial, 0}};
  std::deque<State> queue = {initial};
  while (!queue.empty()) {
    const State s = std::move(queue.front());
    queue.pop_front();
    const int d = distance.at(s);
    if (d >= depth) continue;
    for (const auto& a : model.EnabledActions(s)) {
      uncovered[s].insert(a);
      ++tour.transitions;
      State next = model.Next(s, a);
      if (distance.emplace(next, d + 1).second) queue.push_back(std::move(next));
    }
  }
  tour.states = distance.size();
  const std::size_t limit = static_cast<std::size_t>(std::max(max_length, depth));
  while (!uncovered.empty()) {
    Sequence walk;
    State s = initial;
    while (walk.size() < limit) {
      auto here = uncovered.find(s);
      if (here == uncovered.end()) {
        auto way = WayToUncovered(model, s, initial, uncovered, limit - walk.size() - 1);
        if (!way) break;
        for (const auto& a : *way) {
          MarkCovered(uncovered, s, a);
          walk.push_back(a);
          s = model.Next(s, a);
        }
        continue;
      }
      // Rather a call that leads on to more uncovered ones, and not back
      // to the start; among equals, the first in (verb, node, pod) order.
      const Action* best = nullptr;
      int best_score = -1;
      for (const auto& a : here->second) {
        const State next = model.Next(s, a);
        const int score = (uncovered.count(next) ? 2 : 0) + (next == initial ? 0 : 1);
        if (score > best_score) {
          best = &a;
          best_score = score;
        }
      }
      const Action a = *best;
      MarkCovered(uncovered, s, a);
      walk.push_back(a);
      s = model.Next(s, a);
      if (s == initial) break;
    }
    tour.steps += walk.size();
    tour.walks.push_back(std::move(walk));
  }
  return tour;
}

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
