#include "conformance/baseline.h"

#include <algorithm>

namespace flexkit::conform {
namespace {

// The rules a failing case broke (a FLAKY case's failing run's included).
std::vector<std::string> FailRules(const CaseResult& r) {
  std::vector<std::string> rules;
  for (const auto& f : FindingsOf(r)) {
    if (f.grade == Grade::kFail && std::find(rules.begin(), rules.end(), f.rule) == rules.end())
      rules.push_back(f.rule);
  }
  return rules;
}

}  // namespace

const char* BaselineVerdictName(BaselineVerdict verdict) {
  switch (verdict) {
    case BaselineVerdict::kNew:
      return "new";
    case BaselineVerdict::kStillFailing:
      return "still failing";
    case BaselineVerdict::kFixed:
      return "fixed";
  }
  return "";
}

std::string RuleIdentity(const std::string& rule) {
  // "CODE (CITATION: TEXT)" or "CITATION: TEXT".
  std::string code, inner = rule;
  if (const auto open = rule.find(" ("); open != std::string::npos && rule.back() == ')') {
    code = rule.substr(0, open);
    inner = rule.substr(open + 2, rule.size() - open - 3);
  }
  if (const auto colon = inner.find(": "); colon != std::string::npos)
    inner = inner.substr(colon + 2);
  return code.empty() ? inner : code + ": " + inner;
}

BaselineComparison CompareWithBaseline(const std::vector<CaseResult>& baseline,
                                       const std::vector<CaseResult>& now, bool flaky_allowed) {
  auto Failing = [flaky_allowed](const CaseResult& r) {
    return r.grade == Grade::kFail || (r.grade == Grade::kFlaky && !flaky_allowed);
  };
  std::map<std::string, const CaseResult*> before;
  std::map<std::string, std::string> known;  // rule identity -> a baseline case breaking it
  for (const auto& r : baseline) {
    before[r.name] = &r;
    // A FLAKY case's rule is known whatever --allow-flaky says now.
    if (r.grade != Grade::kFail && r.grade != Grade::kFlaky) continue;
    for (const auto& rule : FailRules(r)) known.emplace(RuleIdentity(rule), r.name);
  }
  BaselineComparison out;
  for (const auto& r : now) {
    auto it = before.find(r.name);
    const CaseResult* old = it == before.end() ? nullptr : it->second;
    const bool failed_before = old && Failing(*old);
    if (!Failing(r)) {
      if (failed_before) {
        out.fixed.push_back(r.name);
        out.verdicts[r.name] = BaselineVerdict::kFixed;
      }
      continue;
    }
    std::vector<std::string> new_rules;
    std::string elsewhere;  // known rules, where the baseline broke them
    for (const auto& rule : FailRules(r)) {
      auto at = known.find(RuleIdentity(rule));
      if (at == known.end()) {
        new_rules.push_back(rule);
      } else if (at->second != r.name) {
        elsewhere += (elsewhere.empty() ? "" : "; ") + rule + ", in " + at->second;
      }
    }
    const std::string then =
        old ? std::string(GradeName(old->grade)) + " in the baseline" : "not in the baseline";
    if (!new_rules.empty()) {
      out.verdicts[r.name] = BaselineVerdict::kNew;
      for (const auto& rule : new_rules) {
        out.new_failures.push_back(failed_before ? r.name + ": newly breaks " + rule
                                                 : r.name + ": " + GradeName(r.grade) + " now, " +
                                                       then + " (" + rule + ")");
      }
      continue;
    }
    out.verdicts[r.name] = BaselineVerdict::kStillFailing;
    out.still_failing.push_back(failed_before || elsewhere.empty()
                                    ? r.name
                                    : r.name + ": " + GradeName(r.grade) + " now, " + then +
                                          "; every rule it breaks is broken there too (" +
                                          elsewhere + ")");
  }
  return out;
}

}  // namespace flexkit::conform
