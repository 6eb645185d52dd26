#include "conformance/reports.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "conformance/background_process.h"
#include "conformance/rules.h"

namespace flexkit::conform {
namespace {

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
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
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += "?";
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out;
}

// Every distinct rule broken in the run, with the cases that broke it,
// in the order first seen.
std::vector<std::pair<std::string, std::vector<std::string>>> DistinctRules(const RunSummary& s) {
  std::vector<std::pair<std::string, std::vector<std::string>>> rules;
  for (const auto& r : s.results) {
    for (const auto& rule : RulesBroken(r)) {
      auto it = std::find_if(rules.begin(), rules.end(),
                             [&rule](const auto& e) { return e.first == rule; });
      if (it == rules.end()) it = rules.insert(rules.end(), {rule, {}});
      it->second.push_back(r.name);
    }
  }
  return rules;
}

// Each finding, and the fix hint of its rule on the line after it; then what
// the case did not check, when a set-up call stopped it.
std::string FindingsText(const CaseResult& r) {
  std::string out;
  for (const auto& f : FindingsOf(r)) {
    out += std::string(f.grade == Grade::kError ? "ERROR " : "") + f.rule + ": " + f.why + "\n";
    if (const std::string hint = FixHint(f.rule); !hint.empty()) out += "  fix: " + hint + "\n";
  }
  if (!r.not_checked.empty()) out += "not checked: " + r.not_checked + "\n";
  return out;
}

std::map<Grade, int> Counts(const RunSummary& s) {
  std::map<Grade, int> counts;
  for (const auto& r : s.results) ++counts[r.grade];
  return counts;
}

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms.count() / 1000.0);
  return buf;
}

}  // namespace

std::string ConsoleReporter::Paint(Grade grade, const std::string& text) const {
  if (!colour_) return text;
  static const std::map<Grade, const char*> colours = {
      {Grade::kPass, "\033[32m"}, {Grade::kFail, "\033[31;1m"},  {Grade::kSkip, "\033[36m"},
      {Grade::kWarn, "\033[33m"}, {Grade::kError, "\033[35;1m"}, {Grade::kFlaky, "\033[33;1m"}};
  return colours.at(grade) + text + "\033[0m";
}

void ConsoleReporter::CaseStarted(const Case& c, std::size_t, std::size_t) {
  // Cases overlap (-j): the line says the latest one started.
  if (colour_ && !quiet_) out_ << "\033[2Kstarted " << c.name << " ...\r" << std::flush;
}

void ConsoleReporter::CaseFinished(const CaseResult& r, std::size_t finished, std::size_t total) {
  if (quiet_) {
    if (r.grade == Grade::kPass) return;
    std::string why = r.reason;
    if (r.grade != Grade::kSkip && r.grade != Grade::kWarn) {
      const auto findings = FindingsOf(r);
      if (!findings.empty()) why = findings.front().rule + ": " + findings.front().why;
      if (findings.size() > 1) why += " (+" + std::to_string(findings.size() - 1) + " more)";
    }
    std::replace(why.begin(), why.end(), '\n', ' ');
    constexpr std::size_t kLine = 300;
    if (why.size() > kLine) why = why.substr(0, kLine) + "...";
    out_ << "[" << finished + 1 << "/" << total << "] " << Paint(r.grade, GradeName(r.grade)) << " "
         << r.name << ": " << why << "\n"
         << std::flush;
    return;
  }
  if (colour_) out_ << "\033[2K";
  out_ << "[" << finished + 1 << "/" << total << "] " << Paint(r.grade, GradeName(r.grade)) << " "
       << r.name << " (" << r.duration.count() << " ms)";
  if (r.grade == Grade::kSkip || r.grade == Grade::kWarn) out_ << ": " << r.reason;
  out_ << "\n";
  if (r.grade == Grade::kFail || r.grade == Grade::kError || r.grade == Grade::kFlaky) {
    for (const auto& f : FindingsOf(r)) {
      out_ << (f.grade == Grade::kError ? "    harness error: " : "    rule: ") << f.rule
           << "\n    why:  " << f.why << "\n";
    }
    if (!r.not_checked.empty()) out_ << "    not checked: " << r.not_checked << "\n";
    if (!r.transcript.empty())
      out_ << "    calls (secrets redacted):\n" << FormatCalls(r.transcript);
  }
  out_ << std::flush;
}

void ConsoleReporter::Summary(const RunSummary& s, const std::string& replay_base) {
  auto counts = Counts(s);
  out_ << "\n"
       << s.results.size() << " cases in " << Seconds(s.wall) << " s (driver processes "
       << Seconds(s.driver_time)
       << " s): " << Paint(Grade::kPass, std::to_string(counts[Grade::kPass]) + " passed") << ", "
       << Paint(Grade::kFail, std::to_string(counts[Grade::kFail]) + " failed") << ", "
       << Paint(Grade::kWarn, std::to_string(counts[Grade::kWarn]) + " warned") << ", "
       << Paint(Grade::kSkip, std::to_string(counts[Grade::kSkip]) + " skipped");
  if (counts[Grade::kFlaky] > 0)
    out_ << ", " << Paint(Grade::kFlaky, std::to_string(counts[Grade::kFlaky]) + " flaky");
  if (counts[Grade::kError] > 0)
    out_ << ", " << Paint(Grade::kError, std::to_string(counts[Grade::kError]) + " harness errors");
  out_ << (s.interrupted ? " (interrupted)" : "") << "\n";
  for (const auto& note : s.notes) out_ << "note: " << note << "\n";
  const auto rules = DistinctRules(s);
  if (!rules.empty()) {
    out_ << rules.size() << " distinct rule" << (rules.size() == 1 ? "" : "s") << " broken:\n";
    for (const auto& [rule, cases] : rules) {
      out_ << "  " << rule << ": " << cases.size() << " case" << (cases.size() == 1 ? "" : "s")
           << " (" << cases.front() << (cases.size() > 1 ? ", ..." : "") << ")\n";
      if (const std::string hint = FixHint(rule); !hint.empty())
        out_ << "    fix: " << hint << "\n";
    }
  }
  std::string failed;
  for (const auto& r : s.results) {
    if (r.grade != Grade::kFail && r.grade != Grade::kFlaky && r.grade != Grade::kError) continue;
    failed += (failed.empty() ? "" : "|") + r.name;
  }
  if (!failed.empty() && !replay_base.empty())
    out_ << "rerun the failed cases: " << replay_base << " --focus '^(" << failed << ")\\b'\n";
}

namespace {

std::string Sha256Of(const std::string& path) {
  // coreutils is on every host flexconform runs on; a file kept short.
  const std::string out = "/tmp/flexconform-sha256-" + std::to_string(::getpid());
  std::string digest;
  if (RunToCompletion({"/usr/bin/sha256sum", "--", path}, out) == 0) {
    std::ifstream in(out);
    in >> digest;
  }
  std::error_code ec;
  std::filesystem::remove(out, ec);
  return digest.size() == 64 ? digest : "";
}

std::string ShardText(const RunInfo& info) {
  return std::to_string(info.shard_index) + "/" + std::to_string(info.shard_total);
}

std::vector<std::pair<std::string, std::string>> Properties(const RunInfo& info) {
  return {{"driver", info.driver},
          {"driver.name", info.driver_name},
          {"driver.sha256", info.driver_sha256},
          {"flexconform.version", FLEXKIT_VERSION},
          {"kubernetes", info.kubernetes},
          {"fixture", info.fixture},
          {"profile", info.profile_file},
          {"seed", std::to_string(info.seed)},
          {"shard", ShardText(info)},
          {"focus", info.focus},
          {"skip", info.skip}};
}

}  // namespace

RunInfo DescribeRun(const std::string& driver, const std::string& driver_name) {
  RunInfo info;
  info.driver = driver;
  info.driver_name = driver_name;
  info.driver_sha256 = Sha256Of(driver);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) info.hostname = host;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  info.started = stamp;
  return info;
}

namespace {

// The case's verdict against the baseline; none without a baseline, or when
// the baseline has no verdict on it.
std::optional<BaselineVerdict> BaselineVerdictOf(const CaseResult& r, const RunInfo& info) {
  if (!info.baseline) return std::nullopt;
  auto it = info.baseline->verdicts.find(r.name);
  if (it == info.baseline->verdicts.end()) return std::nullopt;
  return it->second;
}

// The <testsuite> start tag: how many cases, failures, errors and skips,
// the run's time, when and where it ran.
std::string TestsuiteStartTag(const RunSummary& s, const RunInfo& info) {
  auto counts = Counts(s);
  // With a baseline only a new failure is a JUnit failure: the count is the gate's.
  int failures = counts[Grade::kFail];
  if (info.baseline) {
    failures = 0;
    for (const auto& [name, verdict] : info.baseline->verdicts)
      failures += verdict == BaselineVerdict::kNew;
  }
  const std::string suite_name = "flexconform: " + info.driver_name;
  return "  <testsuite name=\"" + XmlEscape(suite_name) + "\" tests=\"" +
         std::to_string(s.results.size()) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"" + std::to_string(counts[Grade::kError]) + "\" skipped=\"" +
         std::to_string(counts[Grade::kSkip]) + "\" time=\"" + Seconds(s.wall) + "\" timestamp=\"" +
         XmlEscape(info.started) + "\" hostname=\"" + XmlEscape(info.hostname) + "\">\n";
}

// The suite's <properties>: the run's, and the baseline's totals.
std::string SuiteProperties(const RunInfo& info) {
  std::string xml = "    <properties>\n";
  auto properties = Properties(info);
  if (info.baseline) {
    properties.push_back({"baseline", info.baseline->file});
    properties.push_back({"baseline.new", std::to_string(info.baseline->new_failures.size())});
    properties.push_back({"baseline.fixed", std::to_string(info.baseline->fixed.size())});
    properties.push_back(
        {"baseline.still-failing", std::to_string(info.baseline->still_failing.size())});
  }
  for (const auto& [name, value] : properties)
    xml +=
        "      <property name=\"" + XmlEscape(name) + "\" value=\"" + XmlEscape(value) + "\"/>\n";
  xml += "    </properties>\n";
  return xml;
}

// A testcase's <properties>: its verdict when JUnit has no element for it
// (a warning, a flake, a failure the baseline has too) and its baseline
// verdict; "" when it has neither.
std::string CaseProperties(const CaseResult& r, std::optional<BaselineVerdict> against) {
  std::vector<std::pair<std::string, std::string>> properties;
  if (r.grade == Grade::kWarn || r.grade == Grade::kFlaky ||
      against == BaselineVerdict::kStillFailing)
    properties.push_back({"verdict", GradeName(r.grade)});
  if (against) properties.push_back({"baseline", BaselineVerdictName(*against)});
  if (properties.empty()) return "";
  std::string xml = "      <properties>";
  for (const auto& [name, value] : properties)
    xml += "<property name=\"" + XmlEscape(name) + "\" value=\"" + XmlEscape(value) + "\"/>";
  xml += "</properties>\n";
  return xml;
}

// The <failure> (or <error>, for a harness error) of a failing testcase.
std::string FailureElement(const CaseResult& r, std::optional<BaselineVerdict> against) {
  // One element per testcase is what reporters read: every rule in its message.
  std::string message;
  for (const auto& f : FindingsOf(r))
    message += (message.empty() ? "" : " | ") + f.rule + ": " + f.why;
  if (against == BaselineVerdict::kNew) message = "new against the baseline: " + message;
  const char* element = r.grade == Grade::kError ? "error" : "failure";
  const std::string type = r.grade == Grade::kFlaky ? "FLAKY: " + r.rule : r.rule;
  return std::string("      <") + element + " message=\"" + XmlEscape(message) + "\" type=\"" +
         XmlEscape(type) + "\">" + XmlEscape(FindingsText(r) + FormatCalls(r.transcript)) + "</" +
         element + ">\n";
}

// One <testcase>: self-closing for a pass the baseline says nothing about.
std::string Testcase(const CaseResult& r, const RunInfo& info) {
  const auto slash = r.name.find('/');
  const std::string classname = "flexconform." + r.name.substr(0, slash);
  std::string xml = "    <testcase classname=\"" + XmlEscape(classname) + "\" name=\"" +
                    XmlEscape(r.name) + "\" time=\"" + Seconds(r.duration) + "\"";
  const auto against = BaselineVerdictOf(r, info);
  if (r.grade == Grade::kPass && !against) return xml + "/>\n";
  xml += ">\n";
  // JUnit has no warning, flake or baseline: properties and the text, which every
  // reporter shows.
  xml += CaseProperties(r, against);
  if (r.grade == Grade::kSkip) xml += "      <skipped message=\"" + XmlEscape(r.reason) + "\"/>\n";
  // With a baseline only a new failure is a JUnit failure.
  const bool failing = r.grade == Grade::kError ||
                       (info.baseline ? against == BaselineVerdict::kNew
                                      : r.grade == Grade::kFail ||
                                            (r.grade == Grade::kFlaky && !info.flaky_allowed));
  if (r.grade == Grade::kFlaky && info.flaky_allowed)
    xml += "      <system-out>FLAKY (allowed): " + XmlEscape(r.reason) + "</system-out>\n";
  if (against == BaselineVerdict::kStillFailing)
    xml += "      <system-out>" + std::string(GradeName(r.grade)) +
           ", still failing: every rule it breaks is broken in the baseline " +
           XmlEscape(info.baseline->file + "\n" + FindingsText(r) + FormatCalls(r.transcript)) +
           "</system-out>\n";
  if (against == BaselineVerdict::kFixed)
    xml += "      <system-out>fixed: it failed in the baseline " + XmlEscape(info.baseline->file) +
           "</system-out>\n";
  if (failing) xml += FailureElement(r, against);
  if (r.grade == Grade::kWarn)
    xml += "      <system-out>WARN: " + XmlEscape(r.reason) + "</system-out>\n";
  xml += "    </testcase>\n";
  return xml;
}

}  // namespace

std::string JunitXml(const RunSummary& s, const RunInfo& info) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n" +
                    TestsuiteStartTag(s, info) + SuiteProperties(info);
  for (const auto& r : s.results) xml += Testcase(r, info);
  if (!s.notes.empty()) {
    std::string notes;
    for (const auto& note : s.notes) notes += "note: " + note + "\n";
    xml += "    <system-out>" + XmlEscape(notes) + "</system-out>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string JsonReport(const RunSummary& s, const RunInfo& info) {
  nlohmann::ordered_json doc;
  doc["schemaVersion"] = kReportSchemaVersion;
  doc["tool"] = {{"name", "flexconform"}, {"version", FLEXKIT_VERSION}};
  doc["driver"] = info.driver;
  doc["run"] = {{"driverName", info.driver_name},
                {"driverSha256", info.driver_sha256},
                {"profile", info.profile_file},
                {"kubernetes", info.kubernetes},
                {"fixture", info.fixture},
                {"seed", info.seed},
                {"randomWalks", info.random_walks},
                {"depth", info.depth},
                {"shard", {{"index", info.shard_index}, {"total", info.shard_total}}},
                {"focus", info.focus},
                {"skip", info.skip},
                {"hostname", info.hostname},
                {"started", info.started}};
  auto counts = Counts(s);
  doc["summary"] = {{"cases", s.results.size()},       {"passed", counts[Grade::kPass]},
                    {"failed", counts[Grade::kFail]},  {"warned", counts[Grade::kWarn]},
                    {"skipped", counts[Grade::kSkip]}, {"errors", counts[Grade::kError]},
                    {"flaky", counts[Grade::kFlaky]}};
  doc["wall_ms"] = s.wall.count();
  doc["driver_ms"] = s.driver_time.count();
  doc["interrupted"] = s.interrupted;
  doc["notes"] = s.notes;
  doc["rules_broken"] = nlohmann::ordered_json::array();
  for (const auto& [rule, cases] : DistinctRules(s))
    doc["rules_broken"].push_back({{"rule", rule}, {"cases", cases}});
  doc["cases"] = nlohmann::ordered_json::array();
  if (info.baseline) {
    doc["baseline"] = {{"report", info.baseline->file},
                       {"new", info.baseline->new_failures},
                       {"fixed", info.baseline->fixed},
                       {"stillFailing", info.baseline->still_failing}};
  }
  for (const auto& r : s.results) {
    auto c = ResultToJson(r);
    if (info.baseline) {
      if (auto it = info.baseline->verdicts.find(r.name); it != info.baseline->verdicts.end())
        c["baseline"] = BaselineVerdictName(it->second);
    }
    doc["cases"].push_back(std::move(c));
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

LoadedReport ReadJsonReport(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const auto doc = nlohmann::ordered_json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw std::runtime_error(path + ": not a JSON object (a flexconform --json report)");
  const auto version = doc.value("schemaVersion", 0);
  if (version < 1 || version > kReportSchemaVersion || !doc.contains("cases") ||
      !doc["cases"].is_array() || !doc.contains("run") || !doc["run"].is_object())
    throw std::runtime_error(path + ": not a flexconform report of schemaVersion 1.." +
                             std::to_string(kReportSchemaVersion));
  LoadedReport report;
  try {
    const auto& run = doc["run"];
    report.info.driver = doc.at("driver").get<std::string>();
    report.info.driver_name = run.at("driverName").get<std::string>();
    report.info.driver_sha256 = run.at("driverSha256").get<std::string>();
    report.info.profile_file = run.at("profile").get<std::string>();
    report.info.kubernetes = run.at("kubernetes").get<std::string>();
    report.info.fixture = run.at("fixture").get<std::string>();
    report.info.seed = run.at("seed").get<std::uint64_t>();
    // Reports written before these fields were added: the defaults, one shard.
    report.info.random_walks = run.value("randomWalks", report.info.random_walks);
    report.info.depth = run.value("depth", report.info.depth);
    if (run.contains("shard")) {
      report.info.shard_index = run["shard"].at("index").get<int>();
      report.info.shard_total = run["shard"].at("total").get<int>();
      if (report.info.shard_total < 1 || report.info.shard_index < 0 ||
          report.info.shard_index >= report.info.shard_total)
        throw std::runtime_error(path + ": run.shard " + ShardText(report.info) +
                                 " is not i/n with 0 <= i < n");
    }
    report.info.focus = run.value("focus", "");
    report.info.skip = run.value("skip", "");
    report.info.hostname = run.at("hostname").get<std::string>();
    report.info.started = run.at("started").get<std::string>();
    report.summary.wall = std::chrono::milliseconds(doc.at("wall_ms").get<std::int64_t>());
    report.summary.driver_time = std::chrono::milliseconds(doc.at("driver_ms").get<std::int64_t>());
    report.summary.interrupted = doc.at("interrupted").get<bool>();
    report.summary.notes = doc.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::ordered_json::exception&) {
    throw std::runtime_error(path + ": its run fields are missing or mistyped");
  }
  for (const auto& c : doc["cases"]) {
    try {
      report.summary.results.push_back(ResultFromJson(c));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  return report;
}

namespace {

// Why `shard` is not a part of the run `first` is part of, or "".
std::string OtherRun(const RunInfo& first, const RunInfo& shard) {
  auto differs = [](const std::string& what, const std::string& a, const std::string& b) {
    return what + " " + (a.empty() ? "(none)" : a) + ", not " + (b.empty() ? "(none)" : b);
  };
  if (shard.driver_sha256 != first.driver_sha256)
    return "graded another driver: sha256 " + shard.driver_sha256 + ", not " + first.driver_sha256;
  if (shard.seed != first.seed)
    return "is of another run: " +
           differs("--seed", std::to_string(shard.seed), std::to_string(first.seed));
  if (shard.random_walks != first.random_walks || shard.depth != first.depth)
    return "is of another run: " +
           differs("--random/--depth",
                   std::to_string(shard.random_walks) + "/" + std::to_string(shard.depth),
                   std::to_string(first.random_walks) + "/" + std::to_string(first.depth));
  if (shard.focus != first.focus || shard.skip != first.skip)
    return "is of another selection: " + differs("--focus/--skip", shard.focus + " / " + shard.skip,
                                                 first.focus + " / " + first.skip);
  if (shard.shard_total != first.shard_total)
    return "is shard " + ShardText(shard) + " of " + std::to_string(shard.shard_total) +
           " shards, not of " + std::to_string(first.shard_total);
  return "";
}

}  // namespace

LoadedReport MergeReports(const std::vector<std::string>& paths) {
  if (paths.empty()) throw std::runtime_error("merge: no reports given");
  LoadedReport merged;
  std::map<int, std::string> shards;        // index -> its report
  std::map<std::string, std::string> seen;  // case -> the report that had it
  for (const auto& path : paths) {
    LoadedReport shard = ReadJsonReport(path);
    if (path == paths.front()) {
      merged.info = shard.info;
    } else if (const std::string why = OtherRun(merged.info, shard.info); !why.empty()) {
      throw std::runtime_error("merge: " + path + " " + why + " as in " + paths.front());
    }
    if (auto [it, fresh] = shards.emplace(shard.info.shard_index, path); !fresh)
      throw std::runtime_error("merge: shard " + ShardText(shard.info) + " is given twice (" +
                               it->second + " and " + path + ")");
    merged.summary.wall = std::max(merged.summary.wall, shard.summary.wall);
    merged.summary.driver_time += shard.summary.driver_time;
    merged.summary.interrupted |= shard.summary.interrupted;
    for (auto& note : shard.summary.notes)
      merged.summary.notes.push_back("shard " + ShardText(shard.info) + ": " + std::move(note));
    for (auto& r : shard.summary.results) {
      if (auto [it, fresh] = seen.emplace(r.name, path); !fresh)
        throw std::runtime_error("merge: case " + r.name + " is in both " + it->second + " and " +
                                 path + " (shards of one run never share a case)");
      merged.summary.results.push_back(std::move(r));
    }
  }
  std::string missing;
  for (int i = 0; i < merged.info.shard_total; ++i) {
    if (!shards.count(i))
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" +
                 std::to_string(merged.info.shard_total);
  }
  if (!missing.empty())
    throw std::runtime_error("merge: shard " + missing + " missing: the " +
                             std::to_string(paths.size()) + " report(s) given hold " +
                             std::to_string(shards.size()) + " of the run's " +
                             std::to_string(merged.info.shard_total) +
                             " shards (a lost upload?), so the run's verdict is unknown");
  merged.info.shard_index = 0;
  merged.info.shard_total = 1;
  return merged;
}

void WriteReport(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text) || !out.flush())
    throw std::runtime_error("write report " + path + ": cannot write");
}

}  // namespace flexkit::conform
