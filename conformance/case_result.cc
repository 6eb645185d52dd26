#include "conformance/case_result.h"

#include <algorithm>
#include <stdexcept>

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
    case Grade::kFlaky:
      return "FLAKY";
  }
  return "?";
}

Grade GradeNamed(const std::string& name) {
  for (Grade g :
       {Grade::kPass, Grade::kFail, Grade::kSkip, Grade::kWarn, Grade::kError, Grade::kFlaky}) {
    if (name == GradeName(g)) return g;
  }
  throw std::runtime_error("unknown verdict \"" + name + "\"");
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

std::vector<Finding> FindingsOf(const CaseResult& r) {
  if (!r.findings.empty() || (r.grade != Grade::kFail && r.grade != Grade::kError))
    return r.findings;
  return {{r.grade, r.rule, r.reason}};
}

namespace {

// A call's output beyond the first and last kOutputEndBytes is left out of
// reports (a driver flooding 16 MiB per call would make them gigabytes),
// marked where it was cut, the call's whole size kept in "output_bytes".
constexpr std::size_t kOutputEndBytes = 8192;

void ClipOutput(nlohmann::ordered_json& call) {
  // A result read back (a worker's, a shard's) is clipped already.
  if (!call.is_object() || !call.contains("output") || !call["output"].is_array() ||
      call.contains("output_bytes"))
    return;
  auto bytes_of = [](const nlohmann::ordered_json& chunk) -> std::string {
    return chunk.contains("bytes") && chunk["bytes"].is_string() ? chunk["bytes"].get<std::string>()
                                                                 : "";
  };
  std::size_t total = 0;
  for (const auto& chunk : call["output"]) total += bytes_of(chunk).size();
  if (total <= 2 * kOutputEndBytes) return;
  const std::size_t tail_from = total - kOutputEndBytes;
  auto kept = nlohmann::ordered_json::array();
  std::size_t at = 0;
  bool marked = false;
  for (const auto& chunk : call["output"]) {
    const std::string bytes = bytes_of(chunk);
    const std::size_t start = at, end = at + bytes.size();
    at = end;
    auto keep = [&](std::string part) {
      nlohmann::ordered_json piece = chunk;
      piece["bytes"] = std::move(part);
      kept.push_back(std::move(piece));
    };
    if (start < kOutputEndBytes) keep(bytes.substr(0, std::min(end, kOutputEndBytes) - start));
    if (!marked && end > kOutputEndBytes) {
      keep("\n...[flexconform left out " + std::to_string(total - 2 * kOutputEndBytes) + " of " +
           std::to_string(total) + " bytes of output here]...\n");
      marked = true;
    }
    if (end > tail_from) keep(bytes.substr(std::max(start, tail_from) - start));
  }
  call["output"] = std::move(kept);
  call["output_bytes"] = total;
}

}  // namespace

nlohmann::ordered_json ResultToJson(const CaseResult& r) {
  nlohmann::ordered_json c;
  c["name"] = r.name;
  c["tags"] = r.tags;
  c["verdict"] = GradeName(r.grade);
  c["reason"] = r.reason;
  c["rule"] = r.rule;
  c["rules"] = RulesBroken(r);
  c["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : FindingsOf(r)) {
    nlohmann::ordered_json finding = {
        {"verdict", GradeName(f.grade)}, {"rule", f.rule}, {"why", f.why}};
    if (f.call) finding["call"] = *f.call;
    c["findings"].push_back(std::move(finding));
  }
  c["warnings"] = r.warnings;
  if (!r.not_checked.empty()) c["not_checked"] = r.not_checked;
  c["duration_ms"] = r.duration.count();
  c["driver_ms"] = r.driver_time.count();
  c["transcript"] = r.transcript;
  for (auto& entry : c["transcript"]) ClipOutput(entry);
  auto& timeline = c["timeline"];
  timeline["calls"] = nlohmann::ordered_json::array();
  for (const auto& w : r.timeline.calls) timeline["calls"].push_back({w.start_ms, w.end_ms});
  timeline["backend"] = nlohmann::ordered_json::array();
  for (const auto& e : r.timeline.backend) {
    timeline["backend"].push_back({{"server", e.server},
                                   {"start_ms", e.start_ms},
                                   {"duration_ms", e.duration_ms},
                                   {"status", e.status},
                                   {"method", e.method},
                                   {"path", e.path}});
  }
  return c;
}

CaseResult ResultFromJson(const nlohmann::ordered_json& j) {
  const std::string name = j.contains("name") && j["name"].is_string() ? j["name"] : "";
  try {
    CaseResult r;
    r.name = j.at("name").get<std::string>();
    r.tags = j.at("tags").get<std::vector<std::string>>();
    r.grade = GradeNamed(j.at("verdict").get<std::string>());
    r.reason = j.at("reason").get<std::string>();
    r.rule = j.at("rule").get<std::string>();
    for (const auto& f : j.at("findings")) {
      Finding finding{GradeNamed(f.at("verdict").get<std::string>()),
                      f.at("rule").get<std::string>(), f.at("why").get<std::string>()};
      if (f.contains("call")) finding.call = f["call"].get<std::size_t>();
      r.findings.push_back(std::move(finding));
    }
    r.warnings = j.at("warnings").get<std::vector<std::string>>();
    if (j.contains("not_checked")) r.not_checked = j["not_checked"].get<std::string>();
    r.duration = std::chrono::milliseconds(j.at("duration_ms").get<std::int64_t>());
    r.driver_time = std::chrono::milliseconds(j.at("driver_ms").get<std::int64_t>());
    r.transcript = j.at("transcript");
    if (j.contains("timeline")) {  // reports of older versions have none
      const auto& t = j["timeline"];
      for (const auto& w : t.at("calls"))
        r.timeline.calls.push_back({w.at(0).get<std::int64_t>(), w.at(1).get<std::int64_t>()});
      for (const auto& e : t.at("backend")) {
        r.timeline.backend.push_back(
            {e.at("server").get<std::string>(), e.at("start_ms").get<std::int64_t>(),
             e.at("duration_ms").get<std::int64_t>(), e.at("status").get<int>(),
             e.at("method").get<std::string>(), e.at("path").get<std::string>()});
      }
    }
    return r;
  } catch (const nlohmann::ordered_json::exception& e) {
    // The library's id ("[json.exception.out_of_range.403]") says nothing to a user.
    std::string what = e.what();
    if (auto close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != what.npos)
      what = what.substr(close + 2);
    throw std::runtime_error("case " + (name.empty() ? std::string("without a name") : name) +
                             ": " + what);
  }
}

namespace {
std::string Clip(std::string s, std::size_t max) {
  if (s.size() > max) s = s.substr(0, max) + "...(" + std::to_string(s.size()) + " bytes)";
  return s;
}

bool RuleKey(const std::string& key) {
  return key == "kubernetes.io/readwrite" || key == "kubernetes.io/fsType" ||
         key == "kubernetes.io/fsGroup" || key == "kubernetes.io/mounterArgs.FsGroup" ||
         key.rfind("kubernetes.io/secret/", 0) == 0;
}

// `s` cut to `cap` bytes (on a UTF-8 character boundary), its size noted;
// whole when cutting would not make it shorter.
std::string Shortened(const std::string& s, std::size_t cap) {
  const std::string note = "...(" + std::to_string(s.size()) + " bytes)";
  if (s.size() <= cap + note.size()) return s;
  std::size_t cut = cap;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + note;
}

// One argv element as printed: a plain value (a path, a device), or an
// options JSON whose values (but the rule keys') may be shortened.
struct PrintedArg {
  std::string plain;
  nlohmann::ordered_json options;  // an object, or null for a plain value

  std::string Render(std::size_t options_cap, std::size_t plain_cap) const {
    if (options.is_null()) return Shortened(plain, plain_cap);
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [key, value] : options.items()) {
      if (value.is_string() && !RuleKey(key)) {
        out[key] = Shortened(value.get<std::string>(), options_cap);
      } else {
        out[key] = value;
      }
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
};

// The largest cap in [lo, hi] for which fits(cap) holds (fits is monotone), or lo.
template <typename Fits>
std::size_t LargestCap(std::size_t lo, std::size_t hi, const Fits& fits) {
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace

std::string PrintedArgv(const std::vector<std::string>& argv, std::size_t max_bytes) {
  std::string whole;
  for (const auto& a : argv) whole += (whole.empty() ? "" : " ") + a;
  if (whole.size() <= max_bytes) return whole;
  std::vector<PrintedArg> args;
  std::size_t longest = 0;
  for (const auto& a : argv) {
    PrintedArg p;
    if (!a.empty() && a.front() == '{') {
      auto doc = nlohmann::ordered_json::parse(a, nullptr, false);
      if (doc.is_object()) p.options = std::move(doc);
    }
    if (p.options.is_null()) p.plain = a;
    longest = std::max(longest, a.size());
    args.push_back(std::move(p));
  }
  const auto render = [&](std::size_t options_cap, std::size_t plain_cap) {
    std::string out;
    for (const auto& p : args) out += (out.empty() ? "" : " ") + p.Render(options_cap, plain_cap);
    return out;
  };
  // Option values are shortened first (paths say where a call acted);
  // values keep at least a few bytes.
  constexpr std::size_t kMinCap = 8;
  const std::size_t options_cap = LargestCap(
      kMinCap, longest, [&](std::size_t cap) { return render(cap, longest).size() <= max_bytes; });
  if (render(options_cap, longest).size() <= max_bytes) return render(options_cap, longest);
  const std::size_t plain_cap = LargestCap(
      kMinCap, longest, [&](std::size_t cap) { return render(kMinCap, cap).size() <= max_bytes; });
  return render(kMinCap, plain_cap);
}

std::string FormatCalls(const nlohmann::ordered_json& transcript, std::size_t max_argv_bytes) {
  std::string out;
  for (const auto& e : transcript) {
    if (e.value("type", "") != "call") {
      out += "    event: " + e.dump() + "\n";
      continue;
    }
    std::vector<std::string> argv;
    for (const auto& a : e["argv"]) argv.push_back(a.get<std::string>());
    out += "    [" + e.value("node", "") + "] " + PrintedArgv(argv, max_argv_bytes) + "\n";
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
