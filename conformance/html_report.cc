#include "conformance/html_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "conformance/rules.h"
#include "simulator/options_builder.h"

namespace flexkit::conform {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

// A diagram label: at most `max_chars` characters, "…" marking a cut
// (the full text is in the hover).
std::string Label(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_character = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_character && chars++ == max_chars)
      return std::string(text.substr(0, i)) + "\xE2\x80\xA6";
  }
  return std::string(text);
}

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

std::string Str(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::vector<std::string> ArgvOf(const Json& call) {
  std::vector<std::string> argv;
  if (!call.contains("argv") || !call["argv"].is_array()) return argv;
  for (const auto& a : call["argv"]) {
    if (a.is_string()) argv.push_back(a.get<std::string>());
  }
  return argv;
}

// The argv as printed: long values shortened, never the options a rule is about.
std::string Argv(const Json& call, std::size_t max_bytes = 2048) {
  return PrintedArgv(ArgvOf(call), max_bytes);
}

// What decides a verb's effect, from its options JSON: read-only or not,
// the filesystem, the fsGroup, and which secrets came (names only: their
// values are redacted and never shown). "" when the call has no options.
std::string DecisiveOptions(const Json& call) {
  std::string out;
  const auto add = [&out](const std::string& item) { out += (out.empty() ? "" : " ") + item; };
  for (const auto& a : ArgvOf(call)) {
    if (a.empty() || a.front() != '{') continue;
    const auto options = Json::parse(a, nullptr, false);
    if (!options.is_object()) continue;
    const auto value = [&options](const char* key) {
      return options.contains(key) && options[key].is_string() ? options[key].get<std::string>()
                                                               : std::string();
    };
    if (options.contains("kubernetes.io/readwrite"))
      add("readwrite=" + value("kubernetes.io/readwrite"));
    if (!value("kubernetes.io/fsType").empty()) add("fsType=" + value("kubernetes.io/fsType"));
    for (const char* key : {"kubernetes.io/fsGroup", "kubernetes.io/mounterArgs.FsGroup"}) {
      if (!value(key).empty()) add("fsGroup=" + value(key));
    }
    std::string secrets;
    for (const auto& [key, v] : options.items()) {
      if (key.rfind(sim::kSecretKeyPrefix, 0) == 0)
        secrets +=
            (secrets.empty() ? "" : ",") + key.substr(std::string(sim::kSecretKeyPrefix).size());
    }
    if (!secrets.empty()) add("secrets=" + secrets);
  }
  return out;
}

bool IsCheck(const Json& e) { return Str(e, "type") == "event" && Str(e, "event") == "check"; }

const Json& CheckDetails(const Json& e) {
  static const Json kNone = Json::object();
  return e.contains("details") && e["details"].is_object() ? e["details"] : kNone;
}

// What a check row says: "check write: Read-only file system" (the path is in the hover).
std::string CheckLabel(const Json& e) {
  const Json& d = CheckDetails(e);
  return "check " + Str(d, "check") + ": " + Str(d, "outcome");
}

std::string Output(const Json& call) {
  std::string out;
  if (!call.contains("output")) return out;
  for (const auto& c : call["output"]) out += Str(c, "bytes");
  return out;
}

std::string ExitText(const Json& call) {
  if (call.contains("exit_code")) return "exit " + call["exit_code"].dump();
  if (call.contains("signal")) return "signal " + call["signal"].dump();
  return "not run (cached Not supported)";
}

std::string Outcome(const Json& call) {
  return call.contains("verdict") && call["verdict"].is_object() ? Str(call["verdict"], "outcome")
                                                                 : "";
}

bool CallFailed(const Json& call) {
  const std::string outcome = Outcome(call);
  return (call.contains("harness_problem") && call["harness_problem"].is_string()) ||
         (outcome != "success" && outcome != "not_supported");
}

// What the reply arrow says: the outcome, and the message or error.
std::string ReplyLabel(const Json& call) {
  if (call.contains("harness_problem") && call["harness_problem"].is_string())
    return "harness: " + call["harness_problem"].get<std::string>();
  const std::string outcome = Outcome(call);
  static const Json kNoVerdict = Json::object();
  const Json& v = call.contains("verdict") ? call["verdict"] : kNoVerdict;
  if (outcome == "success") {
    const std::string device = Str(v, "device");
    return "Success" + (device.empty() ? "" : " " + device);
  }
  if (outcome == "not_supported") return "Not supported";
  std::string detail = Str(v, "message");
  if (detail.empty()) detail = Str(v, "error");
  return (outcome == "failure" ? "Failure" : outcome) + (detail.empty() ? "" : ": " + detail);
}

// Everything known about one call, for hover and the expanded list.
std::string CallDetails(const Json& call) {
  std::string text = "[" + Str(call, "node") + "] " + Str(call, "component") + ": " + Argv(call) +
                     "\n" + ExitText(call);
  if (const std::string options = DecisiveOptions(call); !options.empty())
    text += "\noptions: " + options;
  if (call.contains("duration_ms")) text += " after " + call["duration_ms"].dump() + " ms";
  text += "\noutcome: " + Outcome(call);
  if (call.contains("verdict") && call["verdict"].is_object()) {
    const std::string error = Str(call["verdict"], "error");
    if (!error.empty()) text += " (" + error + ")";
  }
  if (call.contains("harness_problem") && call["harness_problem"].is_string())
    text += "\nharness: " + call["harness_problem"].get<std::string>();
  text += "\noutput: " + Output(call);
  for (const char* key : {"mounts_added", "mounts_removed"}) {
    if (call.contains(key) && !call[key].empty())
      text += std::string("\n") + key + ": " +
              call[key].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return text;
}

// The transcript index of the case's `n`-th call (0 first).
std::optional<std::size_t> NthCall(const CaseResult& r, std::size_t n) {
  for (std::size_t i = 0; i < r.transcript.size(); ++i) {
    if (Str(r.transcript[i], "type") != "call") continue;
    if (n-- == 0) return i;
  }
  return std::nullopt;
}

// The call a failure is about (transcript index): the call the first
// finding that names one judged (FAIL findings first), else, for findings
// about no particular call (a teardown, older reports), the first call
// that went wrong; none when no call did.
std::optional<std::size_t> FailingCall(const CaseResult& r) {
  const auto findings = FindingsOf(r);
  for (const bool fail_only : {true, false}) {
    for (const auto& f : findings) {
      if (!f.call || (fail_only && f.grade != Grade::kFail)) continue;
      if (const auto index = NthCall(r, *f.call)) return index;
    }
  }
  for (std::size_t i = 0; i < r.transcript.size(); ++i) {
    if (Str(r.transcript[i], "type") == "call" && CallFailed(r.transcript[i])) return i;
  }
  return std::nullopt;
}

bool Failed(Grade g) { return g == Grade::kFail || g == Grade::kError || g == Grade::kFlaky; }

// 1 for the case's first call: how the list under the diagram numbers it.
std::size_t CallNumber(const CaseResult& r, std::size_t transcript_index) {
  std::size_t n = 0;
  for (std::size_t i = 0; i <= transcript_index && i < r.transcript.size(); ++i)
    n += Str(r.transcript[i], "type") == "call" ? 1 : 0;
  return n;
}

std::string CallerLifeline(const Json& call) {
  const std::string component = Str(call, "component");
  if (component == "controller") return "controller";
  return (component.empty() ? "kubelet" : component) + " " + Str(call, "node");
}

// One case's calls and backend requests laid out as a sequence diagram.
class SequenceDiagram {
 public:
  SequenceDiagram(const CaseResult& r, bool backend_lifelines, std::size_t case_index)
      : result_(r), case_index_(case_index) {
    std::vector<std::string> nodes;
    bool controller = false;
    std::set<std::string> callers;
    for (const auto& e : r.transcript) {
      if (IsCheck(e)) {
        // A check runs in a pod on its node: drawn on that node's kubelet.
        const std::string node = Str(CheckDetails(e), "node");
        if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
        callers.insert("kubelet " + node);
      }
      if (Str(e, "type") != "call") continue;
      const std::string node = Str(e, "node");
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
      if (Str(e, "component") == "controller") {
        controller = true;
      } else {
        callers.insert(CallerLifeline(e));
      }
    }
    std::vector<std::string> daemons = nodes;
    for (const auto& b : r.timeline.backend) {
      if (b.server != "cloud" &&
          std::find(daemons.begin(), daemons.end(), b.server) == daemons.end())
        daemons.push_back(b.server);
    }
    // Callers of the first node, the controller, callers of the others.
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (i == 1 && controller) Add("controller");
      for (const auto& c : callers) {
        if (c.size() > nodes[i].size() && c.ends_with(" " + nodes[i])) Add(c);
      }
    }
    if (controller) Add("controller");
    for (const auto& n : nodes) Add("driver " + n);
    if (backend_lifelines) {
      for (const auto& n : daemons) Add("daemon " + n);
      Add("cloud");
    }
    Layout();
  }

  bool empty() const { return rows_.empty(); }
  std::string Svg() const;

 private:
  struct Row {
    std::size_t from = 0, to = 0;
    std::string label;
    std::string options;  // under the arrow: the call's decisive options
    std::string hover;
    std::string css;  // arrow class
    bool note = false;
  };

  void Add(const std::string& lifeline) {
    if (index_.count(lifeline)) return;
    index_[lifeline] = lifelines_.size();
    lifelines_.push_back(lifeline);
  }
  std::optional<std::size_t> Find(const std::string& lifeline) const {
    auto it = index_.find(lifeline);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  void Layout();
  void AddBackendRows(const std::string& node, const CallWindow& w, std::vector<bool>& drawn);

  const CaseResult& result_;
  std::size_t case_index_;
  std::vector<std::string> lifelines_;
  std::map<std::string, std::size_t> index_;
  std::vector<Row> rows_;
};

void SequenceDiagram::AddBackendRows(const std::string& node, const CallWindow& w,
                                     std::vector<bool>& drawn) {
  // Small slack: both sides read the same clock, in whole milliseconds.
  constexpr std::int64_t kSlackMs = 2;
  const auto& events = result_.timeline.backend;
  const auto driver = Find("driver " + node);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const BackendEvent& e = events[i];
    if (drawn[i] || e.start_ms < w.start_ms - kSlackMs || e.start_ms > w.end_ms + kSlackMs)
      continue;
    std::optional<std::size_t> from = driver;
    if (e.server == "cloud") {
      // Made by the daemon whose request was open at the time (the cloud's
      // only clients are daemons); the call's own daemon otherwise.
      std::string by = node;
      for (const auto& d : events) {
        if (d.server != "cloud" && d.start_ms <= e.start_ms &&
            e.start_ms <= d.start_ms + d.duration_ms) {
          by = d.server;
          break;
        }
      }
      from = Find("daemon " + by);
    }
    const auto to = Find(e.server == "cloud" ? "cloud" : "daemon " + e.server);
    if (!from || !to) continue;
    drawn[i] = true;
    Row row;
    row.from = *from;
    row.to = *to;
    row.label = e.method + " " + e.path + " \xE2\x86\x92 " +
                (e.status == 0 ? "dropped" : std::to_string(e.status));
    row.hover = (e.server == "cloud" ? "cloud" : "Convoy daemon on " + e.server) + ": " + e.method +
                " " + e.path + "\nstatus " + std::to_string(e.status) + " after " +
                std::to_string(e.duration_ms) + " ms";
    row.css = e.status >= 400 || e.status == 0 ? "backend err" : "backend";
    rows_.push_back(std::move(row));
  }
}

void SequenceDiagram::Layout() {
  const bool timed =
      result_.timeline.calls.size() == static_cast<std::size_t>(std::count_if(
                                           result_.transcript.begin(), result_.transcript.end(),
                                           [](const Json& e) { return Str(e, "type") == "call"; }));
  std::vector<bool> drawn(result_.timeline.backend.size(), false);
  std::size_t call_index = 0;
  const std::optional<std::size_t> failing =
      Failed(result_.grade) ? FailingCall(result_) : std::nullopt;
  for (std::size_t i = 0; i < result_.transcript.size(); ++i) {
    const Json& e = result_.transcript[i];
    if (IsCheck(e)) {
      Row check;
      check.from = check.to = *Find("kubelet " + Str(CheckDetails(e), "node"));
      check.label = CheckLabel(e);
      check.hover = "the harness checked the volume on " + Str(CheckDetails(e), "node") + ": " +
                    Str(CheckDetails(e), "check") + " " + Str(CheckDetails(e), "path") +
                    "\nfailed: " + Str(CheckDetails(e), "outcome");
      check.css = "check bad self";
      rows_.push_back(std::move(check));
      continue;
    }
    if (Str(e, "type") != "call") {
      Row note;
      note.note = true;
      note.label = "event: " + Str(e, "event");
      note.hover = e.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      rows_.push_back(std::move(note));
      continue;
    }
    const std::string node = Str(e, "node");
    const std::size_t caller = *Find(CallerLifeline(e));
    const std::size_t driver = *Find("driver " + node);
    const bool is_failing = failing && *failing == i;
    const std::string details = CallDetails(e);
    const bool executed = !e.contains("executed") || e["executed"].get<bool>();
    const std::string reply = ReplyLabel(e);
    const std::string outcome_css = CallFailed(e)             ? "reply bad"
                                    : Outcome(e) == "success" ? "reply ok"
                                                              : "reply ns";
    const std::string failing_css = is_failing ? " failing" : "";
    if (!executed) {
      Row cached;
      cached.from = cached.to = caller;
      cached.label = Str(e, "verb") + ": " + reply + " (cached)";
      cached.options = DecisiveOptions(e);
      cached.hover = details;
      cached.css = "reply ns self" + failing_css;
      rows_.push_back(std::move(cached));
      ++call_index;
      continue;
    }
    Row request;
    request.from = caller;
    request.to = driver;
    request.label = Str(e, "verb");
    request.options = DecisiveOptions(e);
    request.hover = details;
    request.css = "call" + failing_css;
    rows_.push_back(std::move(request));
    if (timed) AddBackendRows(node, result_.timeline.calls[call_index], drawn);
    Row answer;
    answer.from = driver;
    answer.to = caller;
    answer.label = reply;
    answer.hover = details;
    answer.css = outcome_css + failing_css;
    rows_.push_back(std::move(answer));
    ++call_index;
  }
}

std::string SequenceDiagram::Svg() const {
  constexpr int kColumn = 220, kMargin = 105, kHeader = 44, kRow = 24, kOptionsLine = 12;
  const auto row_height = [](const Row& row) {
    return kRow + (row.options.empty() ? 0 : kOptionsLine);
  };
  const int width = kMargin * 2 + kColumn * static_cast<int>(lifelines_.size() - 1);
  int height = kHeader + 16;
  for (const auto& row : rows_) height += row_height(row);
  const auto x = [&](std::size_t i) { return kMargin + kColumn * static_cast<int>(i); };
  const std::string marker = "arrow-" + std::to_string(case_index_);
  std::string svg = "<svg class=\"seq\" role=\"img\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                    std::to_string(width) + " " + std::to_string(height) + "\">";
  svg += "<title>" + HtmlText(result_.name) + ": calls across components and nodes</title>";
  svg += "<defs><marker id=\"" + marker +
         "\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
         "markerUnits=\"userSpaceOnUse\" "
         "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>";
  for (std::size_t i = 0; i < lifelines_.size(); ++i) {
    const std::string& name = lifelines_[i];
    const std::string kind = name.substr(0, name.find(' '));
    svg += "<g class=\"lifeline " + HtmlText(kind) + "\"><title>" + HtmlText(name) +
           "</title><line x1=\"" + std::to_string(x(i)) + "\" y1=\"30\" x2=\"" +
           std::to_string(x(i)) + "\" y2=\"" + std::to_string(height - 4) + "\"/><rect x=\"" +
           std::to_string(x(i) - 95) +
           "\" y=\"4\" width=\"190\" height=\"26\" rx=\"4\"/><text x=\"" + std::to_string(x(i)) +
           "\" y=\"21\">" + HtmlText(Label(name, 26)) + "</text></g>";
  }
  int y = kHeader, below = 0;  // below: the previous row's options line
  for (const auto& row : rows_) {
    y += kRow + below;
    below = row_height(row) - kRow;
    const std::string ys = std::to_string(y);
    // The options are decisive, so never clipped (each value is short).
    const std::string options =
        row.options.empty()
            ? ""
            : std::string("<text class=\"options") + (row.from == row.to ? " self" : "") +
                  "\" x=\"" +
                  std::to_string(row.from == row.to ? x(row.from) + 36
                                                    : (x(row.from) + x(row.to)) / 2) +
                  "\" y=\"" + std::to_string(y + 11) + "\">" + HtmlText(row.options, 512) +
                  "</text>";
    if (row.note) {
      svg += "<g class=\"note\"><title>" + HtmlText(row.hover, 4096) +
             "</title><rect x=\"8\" y=\"" + std::to_string(y - 16) + "\" width=\"" +
             std::to_string(width - 16) + "\" height=\"20\" rx=\"3\"/><text x=\"" +
             std::to_string(width / 2) + "\" y=\"" + std::to_string(y - 2) + "\">" +
             HtmlText(Label(row.label, 140)) + "</text></g>";
      continue;
    }
    svg += "<g class=\"arrow " + row.css + "\"><title>" + HtmlText(row.hover, 4096) + "</title>";
    if (row.from == row.to) {
      const int x0 = x(row.from);
      svg += "<path d=\"M" + std::to_string(x0) + "," + std::to_string(y - 10) +
             " h30 v10 h-30\" "
             "marker-end=\"url(#" +
             marker + ")\"/><text class=\"self\" x=\"" + std::to_string(x0 + 36) + "\" y=\"" +
             std::to_string(y - 2) + "\">" + HtmlText(Label(row.label, 90)) + "</text>" + options;
    } else {
      const int x1 = x(row.from), x2 = x(row.to);
      const std::size_t room = static_cast<std::size_t>(std::abs(x2 - x1) / 7);  // 11px monospace
      svg += "<line x1=\"" + std::to_string(x1) + "\" y1=\"" + ys + "\" x2=\"" +
             std::to_string(x2) + "\" y2=\"" + ys + "\" marker-end=\"url(#" + marker +
             ")\"/><text x=\"" + std::to_string((x1 + x2) / 2) + "\" y=\"" + std::to_string(y - 5) +
             "\">" + HtmlText(Label(row.label, std::max<std::size_t>(room, 12))) + "</text>" +
             options;
    }
    svg += "</g>";
  }
  svg += "</svg>";
  return svg;
}

std::string Tags(const std::vector<std::string>& tags) {
  std::string out;
  for (const auto& t : tags) out += (out.empty() ? "" : " ") + t;
  return out;
}

constexpr const char* kStyle = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:0 0 .4em}
#filters{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}
#filters fieldset{border:1px solid #ccc;border-radius:4px;background:#fff}
#filters label{margin-right:.8em;white-space:nowrap}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
td.reason{max-width:40em;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .5em;border-radius:3px;color:#fff;font-weight:600}
.badge.PASS{background:#2e7d32}.badge.FAIL{background:#c62828}
.badge.SKIP{background:#00838f}.badge.FLAKY{background:#ad7a00}.badge.WARN{background:#ef6c00}.badge.ERROR{background:#6a1b9a}
tr.FAIL{background:#fdecea}tr.WARN{background:#fff4e5}
section.case{background:#fff;border:1px solid #ddd;border-left:6px solid #2e7d32;border-radius:4px;
 margin:1em 0;padding:.8em;overflow-x:auto}
section.case.FAIL{border-left-color:#c62828;background:#fff8f7}
section.case.WARN{border-left-color:#ef6c00}section.case.SKIP{border-left-color:#00838f}
.failure{border:1px solid #c62828;background:#fdecea;padding:.5em;border-radius:4px;margin:.5em 0}
.warning{border:1px solid #ef6c00;background:#fff4e5;padding:.5em;border-radius:4px;margin:.5em 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.4em;margin:.3em 0;
 max-height:24em;overflow:auto}
li.failing{background:#fdecea}
svg.seq{font:11px monospace;display:block;margin:.5em 0;overflow:visible}
svg.seq text{text-anchor:middle}svg.seq text.self{text-anchor:start}
svg.seq .lifeline line{stroke:#999;stroke-dasharray:4 3}
svg.seq .lifeline rect{fill:#eef2f7;stroke:#7a8ca5}
svg.seq .lifeline.driver rect{fill:#efe7f7;stroke:#8e6bb0}
svg.seq .lifeline.daemon rect,svg.seq .lifeline.cloud rect{fill:#e7f4ee;stroke:#5f9b7c}
svg.seq .arrow line,svg.seq .arrow path{stroke:#333;fill:none;stroke-width:1.2}
svg.seq marker path{fill:#333}
svg.seq .reply line,svg.seq .reply path{stroke-dasharray:5 3}
svg.seq .reply.ok text{fill:#2e7d32}svg.seq .reply.ns text{fill:#777}
svg.seq .reply.bad line{stroke:#c62828}svg.seq .reply.bad text{fill:#c62828}
svg.seq .backend line{stroke:#1565c0}svg.seq .backend text{fill:#1565c0}
svg.seq .backend.err line{stroke:#c62828}svg.seq .backend.err text{fill:#c62828}
svg.seq .failing line,svg.seq .failing path{stroke:#c62828;stroke-width:3}
svg.seq .failing text{fill:#c62828;font-weight:bold}
svg.seq .note rect{fill:#fffde7;stroke:#d5c67a}
svg.seq text.options{font-size:10px;fill:#5d4037}
svg.seq .check path{stroke:#c62828;stroke-width:2}svg.seq .check text{fill:#c62828;font-weight:bold}
svg.seq g.arrow:hover text{font-weight:bold}
)css";

// Applies the checkboxes, the two buttons (failures only, all) and the URL
// fragment to cases and summary rows;
// reports on <body> how many diagrams rendered and how many cases show.
constexpr const char* kScript = R"js(
(function () {
  var boxes = Array.prototype.slice.call(document.querySelectorAll('#filters input'));
  function checked(kind) {
    var s = {};
    boxes.forEach(function (b) { if (b.dataset.kind === kind && b.checked) s[b.value] = true; });
    return s;
  }
  function apply() {
    var verdicts = checked('verdict'), tags = checked('tag'), visible = 0;
    document.querySelectorAll('[data-verdict]').forEach(function (el) {
      var own = el.dataset.tags ? el.dataset.tags.split(' ') : [];
      var show = !!verdicts[el.dataset.verdict] &&
                 (own.length === 0 || own.some(function (t) { return !!tags[t]; }));
      el.hidden = !show;
      if (show && el.classList.contains('case')) visible++;
    });
    document.body.dataset.visible = String(visible);
  }
  function fromFragment() {
    var wanted = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv.length === 2 && (kv[0] === 'verdict' || kv[0] === 'tag'))
        wanted[kv[0]] = decodeURIComponent(kv[1]).split(',');
    });
    ['verdict', 'tag'].forEach(function (kind) {
      if (!wanted[kind]) return;
      boxes.forEach(function (b) {
        if (b.dataset.kind === kind) b.checked = wanted[kind].indexOf(b.value) >= 0;
      });
    });
  }
  var rendered = 0;
  document.querySelectorAll('svg.seq').forEach(function (svg) {
    var box = svg.getBBox();
    if (box.width > 0 && box.height > 0) rendered++;
  });
  document.body.dataset.rendered = String(rendered);
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
  var failing = {FAIL: true, FLAKY: true, ERROR: true};
  document.querySelectorAll('#filters button[data-show]').forEach(function (button) {
    button.addEventListener('click', function () {
      var failuresOnly = button.dataset.show === 'failures';
      boxes.forEach(function (b) {
        b.checked = !failuresOnly || b.dataset.kind !== 'verdict' || !!failing[b.value];
      });
      apply();
    });
  });
  window.addEventListener('hashchange', function () { fromFragment(); apply(); });
  fromFragment();
  apply();
})();
)js";

}  // namespace

std::string HtmlText(std::string_view text, std::size_t max_bytes) {
  std::string out;
  const std::size_t limit = std::min(text.size(), max_bytes);
  std::size_t i = 0;
  while (i < limit) {
    const std::size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (i + n > limit) break;  // never cut a character in two
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const char ch = text[i++];
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += ch;
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F) {
          out += kReplacement;
        } else {
          out += ch;
        }
    }
  }
  if (limit < text.size()) out += "\xE2\x80\xA6 (" + std::to_string(text.size()) + " bytes)";
  return out;
}

namespace {
// The fix hint of `rule` (RULES.md), as a paragraph; nothing when it has none.
std::string FixParagraph(const std::string& rule) {
  const std::string hint = FixHint(rule);
  return hint.empty() ? "" : "<p class=\"fix\"><b>Fix:</b> " + HtmlText(hint) + "</p>";
}

// The summary table's rule column: every rule the case broke.
std::string RulesCell(const CaseResult& r) {
  const auto rules = RulesBroken(r);
  if (rules.size() < 2) return r.rule;
  std::string cell;
  for (const auto& rule : rules) cell += (cell.empty() ? "" : "; ") + rule;
  return cell;
}

// How many cases have each verdict ("PASS", ...) and each tag.
struct CaseCounts {
  std::map<std::string, int> verdicts;
  std::map<std::string, int> tags;

  int Verdicts(const std::string& grade) const {
    const auto it = verdicts.find(grade);
    return it == verdicts.end() ? 0 : it->second;
  }
};

CaseCounts CountCases(const RunSummary& summary) {
  CaseCounts counts;
  for (const auto& r : summary.results) {
    ++counts.verdicts[GradeName(r.grade)];
    for (const auto& t : r.tags) ++counts.tags[t];
  }
  return counts;
}

// The page from its doctype to <body>: the title and the stylesheet.
std::string Head(const std::string& driver) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width\"><title>flexconform: " +
         HtmlText(driver, 200) + "</title><style>" + kStyle + "</style></head>\n<body>\n";
}

// The heading and what was run: the driver, the fixture, the times and a
// badge per verdict.
std::string RunParagraph(const RunSummary& summary, const std::string& driver,
                         const std::string& fixture, const CaseCounts& counts) {
  std::string html =
      "<h1>flexconform report</h1><p>Driver <code>" + HtmlText(driver) + "</code>, fixture <code>" +
      HtmlText(fixture) + "</code>: " + std::to_string(summary.results.size()) + " cases in " +
      Seconds(summary.wall) + " (driver processes " + Seconds(summary.driver_time) + ")";
  for (const char* grade : {"PASS", "FAIL", "FLAKY", "WARN", "SKIP", "ERROR"})
    html += ", <span class=\"badge " + std::string(grade) + "\">" +
            std::to_string(counts.Verdicts(grade)) + " " + grade + "</span>";
  if (summary.interrupted) html += " (interrupted)";
  html += ". Secrets are redacted. Hover an arrow for the call's argv and reply.</p>\n";
  return html;
}

// The buttons and the checkboxes by verdict and by tag that kScript reads.
std::string Filters(const CaseCounts& counts) {
  std::string html =
      "<div id=\"filters\"><fieldset><legend>Show</legend><button type=\"button\" "
      "data-show=\"failures\">Failures only</button> <button type=\"button\" "
      "data-show=\"all\">All</button></fieldset><fieldset><legend>Verdict</legend>";
  for (const char* grade : {"FAIL", "FLAKY", "ERROR", "WARN", "PASS", "SKIP"}) {
    html += "<label><input type=\"checkbox\" data-kind=\"verdict\" value=\"" + std::string(grade) +
            "\" checked> " + grade + " (" + std::to_string(counts.Verdicts(grade)) + ")</label>";
  }
  html += "</fieldset><fieldset><legend>Tag</legend>";
  for (const auto& [tag, count] : counts.tags) {
    html += "<label><input type=\"checkbox\" data-kind=\"tag\" value=\"" + HtmlText(tag) +
            "\" checked> " + HtmlText(tag) + " (" + std::to_string(count) + ")</label>";
  }
  html += "</fieldset></div>\n";
  return html;
}

// The run indexes of the cases in the order the page shows them: failures
// first, then warnings, then the rest, each in run order. A case keeps its
// run index as its anchor.
std::vector<std::size_t> DisplayOrder(const RunSummary& summary) {
  std::vector<std::size_t> order(summary.results.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto rank = [&summary](std::size_t i) {
    const Grade g = summary.results[i].grade;
    return Failed(g) ? 0 : g == Grade::kWarn ? 1 : 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&rank](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  return order;
}

// One row per case, linking to its section.
std::string SummaryTable(const RunSummary& summary, const std::vector<std::size_t>& order) {
  std::string html =
      "<table id=\"summary\"><thead><tr><th>Case</th><th>Tags</th><th>Verdict</th>"
      "<th>Duration</th><th>Rule</th><th>Reason</th></tr></thead><tbody>\n";
  for (const std::size_t i : order) {
    const CaseResult& r = summary.results[i];
    const std::string grade = GradeName(r.grade);
    html += "<tr class=\"" + grade + "\" data-verdict=\"" + grade + "\" data-tags=\"" +
            HtmlText(Tags(r.tags)) + "\"><td><a href=\"#case-" + std::to_string(i) + "\">" +
            HtmlText(r.name) + "</a></td><td>" + HtmlText(Tags(r.tags)) +
            "</td><td><span class=\"badge " + grade + "\">" + grade + "</span></td><td>" +
            Seconds(r.duration) + "</td><td>" + HtmlText(RulesCell(r), 600) +
            "</td><td class=\"reason\">" + HtmlText(r.reason, 1000) + "</td></tr>\n";
  }
  html += "</tbody></table>\n";
  return html;
}

// Each finding's rule, why and fix (the case's rule and reason when it has
// no findings), then what a set-up call's defect kept the case from checking.
std::string FindingParagraphs(const CaseResult& r) {
  std::string html;
  if (r.findings.size() > 1)
    html += "<p><b>" + std::to_string(r.findings.size()) + " findings</b></p>";
  for (const auto& f : r.findings) {
    html += std::string("<p><b>") + (f.grade == Grade::kError ? "Harness error:" : "Rule broken:") +
            "</b> " + HtmlText(f.rule) + "</p><p><b>Why:</b> " + HtmlText(f.why, 8192) + "</p>" +
            FixParagraph(f.rule);
  }
  if (r.findings.empty())
    html += "<p><b>Rule broken:</b> " + HtmlText(r.rule) + "</p><p><b>Why:</b> " +
            HtmlText(r.reason, 8192) + "</p>" + FixParagraph(r.rule);
  if (!r.not_checked.empty())
    html += "<p><b>Not checked:</b> " + HtmlText(r.not_checked, 2048) + "</p>";
  return html;
}

// The call at transcript index `index`: its argv, options, exit, reply and output.
std::string FailingCallParagraphs(const CaseResult& r, std::size_t index) {
  const Json& failing = r.transcript[index];
  const std::string options = DecisiveOptions(failing);
  return "<p><b>Failing call</b> (call " + std::to_string(CallNumber(r, index)) + ", " +
         HtmlText(CallerLifeline(failing)) + "): <code>" + HtmlText(Argv(failing)) + "</code></p>" +
         (options.empty() ? "" : "<p><b>Options:</b> " + HtmlText(options) + "</p>") + "<p>" +
         HtmlText(ExitText(failing)) + ", " + HtmlText(ReplyLabel(failing), 2048) + "</p><pre>" +
         HtmlText(Output(failing), 16384) + "</pre>";
}

// One paragraph per failed harness check in the transcript.
std::string FailedCheckParagraphs(const CaseResult& r) {
  std::string html;
  for (const auto& e : r.transcript) {
    if (!IsCheck(e)) continue;
    html += "<p><b>Failed check</b> on " + HtmlText(Str(CheckDetails(e), "node")) + ": " +
            HtmlText(Str(CheckDetails(e), "check")) + " <code>" +
            HtmlText(Str(CheckDetails(e), "path"), 1024) +
            "</code>: " + HtmlText(Str(CheckDetails(e), "outcome"), 2048) + "</p>";
  }
  return html;
}

// What a FAIL, FLAKY or ERROR case broke, the call that broke it and its
// failed checks.
std::string FailureBox(const CaseResult& r) {
  std::string html = "<div class=\"failure\">" + FindingParagraphs(r);
  if (const auto index = FailingCall(r)) html += FailingCallParagraphs(r, *index);
  html += FailedCheckParagraphs(r) + "</div>";
  return html;
}

// Under the diagram, expandable: every call in full, and the other events.
std::string CallList(const CaseResult& r) {
  const auto failing = Failed(r.grade) ? FailingCall(r) : std::nullopt;
  std::size_t calls = 0;
  std::string items;
  for (std::size_t k = 0; k < r.transcript.size(); ++k) {
    const Json& e = r.transcript[k];
    if (Str(e, "type") != "call") {
      items += "<li>event " +
               HtmlText(e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 2048) +
               "</li>";
      continue;
    }
    ++calls;
    items += std::string("<li") + (failing == k ? " class=\"failing\"" : "") + "><pre>call " +
             std::to_string(calls) + ": " + HtmlText(CallDetails(e), 16384) + "</pre></li>";
  }
  return "<details><summary>" + std::to_string(calls) +
         " calls: argv, exit, output, verdict, mounts</summary><ol>" + items + "</ol></details>";
}

// The section of the case with run index `index`: its heading, what its
// verdict is about, and its calls as a diagram and a list.
std::string CaseSection(const CaseResult& r, std::size_t index, bool backend_lifelines) {
  const std::string grade = GradeName(r.grade);
  std::string html = "<section class=\"case " + grade + "\" id=\"case-" + std::to_string(index) +
                     "\" data-verdict=\"" + grade + "\" data-tags=\"" + HtmlText(Tags(r.tags)) +
                     "\"><h2>" + HtmlText(r.name) + " <span class=\"badge " + grade + "\">" +
                     grade + "</span></h2><p>Tags: " + HtmlText(Tags(r.tags)) + "; " +
                     Seconds(r.duration) + " (driver " + Seconds(r.driver_time) + ")</p>";
  if (Failed(r.grade)) {
    html += FailureBox(r);
  } else if (r.grade == Grade::kWarn) {
    html += "<div class=\"warning\"><p><b>" + HtmlText(r.rule) + "</b></p><p>" +
            HtmlText(r.reason, 8192) + "</p></div>";
  } else if (r.grade == Grade::kSkip) {
    html += "<p>Skipped: " + HtmlText(r.reason, 2048) + "</p>";
  }
  if (const SequenceDiagram diagram(r, backend_lifelines, index); !diagram.empty())
    html += diagram.Svg() + CallList(r);
  html += "</section>\n";
  return html;
}
}  // namespace

std::string HtmlReport(const RunSummary& summary, const std::string& driver,
                       const std::string& fixture) {
  const CaseCounts counts = CountCases(summary);
  const std::vector<std::size_t> order = DisplayOrder(summary);
  std::string html = Head(driver) + RunParagraph(summary, driver, fixture, counts) +
                     Filters(counts) + SummaryTable(summary, order);
  const bool backend_lifelines = fixture == "convoy-fake";
  for (const std::size_t i : order) html += CaseSection(summary.results[i], i, backend_lifelines);
  html += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return html;
}

}  // namespace flexkit::conform
