#include "conformance/baseline.h"

#include <algorithm>
#include <map>

namespace flexkit::conform {

BaselineComparison CompareWithBaseline(const std::vector<CaseResult>& baseline,
                                       const std::vector<CaseResult>& now, bool flaky_allowed) {
  auto Failing = [flaky_allowed](const CaseResult& r) {
    return r.grade == Grade::kFail || (r.grade == Grade::kFlaky && !flaky_allowed);
  };
  std::map<std::string, const CaseResult*> before;
  for (const auto& r : baseline) before[r.name] = &r;
  BaselineComparison out;
  for (const auto& r : now) {
    auto it = before.find(r.name);
    const CaseResult* old = it == before.end() ? nullptr : it->second;
    if (!Failing(r)) {
      if (old && Failing(*old)) out.fixed.push_back(r.name);
      continue;
    }
    if (!old || !Failing(*old)) {
      out.new_failures.push_back(
          r.name + ": " + GradeName(r.grade) + " now, " +
          (old ? std::string(GradeName(old->grade)) + " in the baseline" : "not in the baseline") +
          " (" + r.rule + ")");
      continue;
    }
    const auto old_rules = RulesBroken(*old);
    bool new_rule = false;
    for (const auto& rule : RulesBroken(r)) {
      if (std::find(old_rules.begin(), old_rules.end(), rule) != old_rules.end()) continue;
      out.new_failures.push_back(r.name + ": newly breaks " + rule);
      new_rule = true;
    }
    if (!new_rule) out.still_failing.push_back(r.name);
  }
  return out;
}

}  // namespace flexkit::conform
