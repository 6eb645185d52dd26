#pragma once
// The rules flexconform grades by, each a section of conformance/RULES.md,
// and the one-line fix hint for each.
// A rule string is "<id>: <statement>", e.g. "F19 never-reformat: an
// existing filesystem is never reformatted"; the id is the RULES.md section
// heading (an anchors failure mode F1-F30 and a name, or a name alone:
// "mount-succeeds"). "harness" and "fixture" name a problem of the harness
// or of the profile's fixture, not a rule of the driver's.
#include <string>
#include <vector>

namespace flexkit::conform {

struct Rule {
  std::string id;    // "F19 never-reformat": RULES.md's "### F19 never-reformat"
  std::string hint;  // what a driver author changes, in one line
};

// Every rule, in RULES.md's order.
const std::vector<Rule>& Rules();

// The id `rule` starts with: its text before the first ": ", or all of
// it when it has none ("harness").
std::string RuleId(const std::string& rule);

// The hint of the rule `rule` names; empty when its id is not a rule (a
// report written by an older flexconform).
std::string FixHint(const std::string& rule);

// The rule a call's harness problem (sim::CallResult::harness_problem)
// breaks: a child holding the output open F17, output past the cap the
// one-reply rule (a flood is output, not a hang), anything else (the call
// still ran at the deadline) F16.
std::string HarnessProblemRule(const std::string& harness_problem);

}  // namespace flexkit::conform
