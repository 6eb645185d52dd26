#include "conformance/case_result.h"

namespace flexkit::conform {

const char* GradeName(Grade grade) {
  switch (grade) {
    case Grade::kPass:
      return "PASS";
    case Grade::kFail:
      return "FAIL";
    case Grade::kSkip:
      return "SKIP";
    case Grade::kWarn:
      return "WARN";
    case Grade::kError:
      return "ERROR";
  }
  return "?";
}

void AddFinding(CaseResult& r, Finding finding) {
  for (const auto& f : r.findings) {
    if (f.grade == finding.grade && f.rule == finding.rule && f.why == finding.why) return;
  }
  r.reason = r.findings.empty() ? finding.why : r.reason + "; " + finding.why;
  // A rule the driver broke outranks a harness error met later: the FAIL stands.
  const bool first_fail = finding.grade == Grade::kFail && r.grade != Grade::kFail;
  if (r.findings.empty() || first_fail) r.rule = finding.rule;
  if (finding.grade == Grade::kFail || r.grade != Grade::kFail) r.grade = finding.grade;
  r.findings.push_back(std::move(finding));
}

std::vector<std::string> RulesBroken(const CaseResult& r) {
  std::vector<std::string> rules;
  for (const auto& f : r.findings) {
    if (f.grade != Grade::kFail) continue;
    bool seen = false;
    for (const auto& x : rules) seen |= x == f.rule;
    if (!seen) rules.push_back(f.rule);
  }
  return rules;
}

namespace {
std::string Clip(std::string s, std::size_t max) {
  if (s.size() > max) s = s.substr(0, max) + "...(" + std::to_string(s.size()) + " bytes)";
  return s;
}
}  // namespace

std::string FormatCalls(const nlohmann::ordered_json& transcript, std::size_t max_argv_bytes) {
  std::string out;
  for (const auto& e : transcript) {
    if (e.value("type", "") != "call") {
      out += "    event: " + e.dump() + "\n";
      continue;
    }
    std::string argv;
    for (const auto& a : e["argv"]) argv += (argv.empty() ? "" : " ") + a.get<std::string>();
    out += "    [" + e.value("node", "") + "] " + Clip(argv, max_argv_bytes) + "\n";
    std::string output;
    if (e.contains("output")) {
      for (const auto& c : e["output"]) {
        output += "<" + c.value("stream", "") + ">" + c.value("bytes", "");
      }
    }
    std::string exit = e.contains("exit_code") ? "exit " + e["exit_code"].dump()
                       : e.contains("signal")  ? "signal " + e["signal"].dump()
                                               : "not run";
    out += "      -> " + exit + ", output " + Clip(nlohmann::json(output).dump(), 400);
    if (e.contains("verdict") && e["verdict"].is_object()) {
      out += ", outcome " + e["verdict"].value("outcome", "");
      if (e["verdict"].contains("error") && e["verdict"]["error"].is_string())
        out += " (" + Clip(e["verdict"]["error"].get<std::string>(), 300) + ")";
    }
    if (e.contains("harness_problem") && e["harness_problem"].is_string())
      out += "\n      harness: " + e["harness_problem"].get<std::string>();
    for (const char* key : {"mounts_added", "mounts_removed"}) {
      if (e.contains(key) && !e[key].empty())
        out += std::string("\n      ") + key + ": " + e[key].dump();
    }
    out += "\n";
  }
  return out;
}

}  // namespace flexkit::conform
