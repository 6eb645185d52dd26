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
  }
  return "?";
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
