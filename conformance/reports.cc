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

// Each finding, and the fix hint of its rule on the line after it.
std::string FindingsText(const CaseResult& r) {
  std::string out;
  for (const auto& f : FindingsOf(r)) {
    out += std::string(f.grade == Grade::kError ? "ERROR " : "") + f.rule + ": " + f.why + "\n";
    if (const std::string hint = FixHint(f.rule); !hint.empty()) out += "  fix: " + hint + "\n";
  }
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
  if (colour_) out_ << "\033[2Kstarted " << c.name << " ...\r" << std::flush;
}

void ConsoleReporter::CaseFinished(const CaseResult& r, std::size_t finished, std::size_t total) {
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

std::vector<std::pair<std::string, std::string>> Properties(const RunInfo& info) {
  return {{"driver", info.driver},
          {"driver.name", info.driver_name},
          {"driver.sha256", info.driver_sha256},
          {"flexconform.version", FLEXKIT_VERSION},
          {"kubernetes", info.kubernetes},
          {"fixture", info.fixture},
          {"profile", info.profile_file},
          {"seed", std::to_string(info.seed)}};
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

std::string JunitXml(const RunSummary& s, const RunInfo& info) {
  auto counts = Counts(s);
  const std::string suite_name = "flexconform: " + info.driver_name;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  xml += "  <testsuite name=\"" + XmlEscape(suite_name) + "\" tests=\"" +
         std::to_string(s.results.size()) + "\" failures=\"" +
         std::to_string(counts[Grade::kFail]) + "\" errors=\"" +
         std::to_string(counts[Grade::kError]) + "\" skipped=\"" +
         std::to_string(counts[Grade::kSkip]) + "\" time=\"" + Seconds(s.wall) + "\" timestamp=\"" +
         XmlEscape(info.started) + "\" hostname=\"" + XmlEscape(info.hostname) + "\">\n";
  xml += "    <properties>\n";
  for (const auto& [name, value] : Properties(info))
    xml +=
        "      <property name=\"" + XmlEscape(name) + "\" value=\"" + XmlEscape(value) + "\"/>\n";
  xml += "    </properties>\n";
  for (const auto& r : s.results) {
    const auto slash = r.name.find('/');
    const std::string classname = "flexconform." + r.name.substr(0, slash);
    xml += "    <testcase classname=\"" + XmlEscape(classname) + "\" name=\"" + XmlEscape(r.name) +
           "\" time=\"" + Seconds(r.duration) + "\"";
    if (r.grade == Grade::kPass) {
      xml += "/>\n";
      continue;
    }
    xml += ">\n";
    if (r.grade == Grade::kWarn) {
      // JUnit has no warning: a property and the text, which every reporter shows.
      xml += "      <properties><property name=\"verdict\" value=\"WARN\"/></properties>\n";
    }
    if (r.grade == Grade::kSkip)
      xml += "      <skipped message=\"" + XmlEscape(r.reason) + "\"/>\n";
    if (r.grade == Grade::kFlaky) {
      xml += "      <properties><property name=\"verdict\" value=\"FLAKY\"/></properties>\n";
    }
    const bool failing = r.grade == Grade::kFail || r.grade == Grade::kError ||
                         (r.grade == Grade::kFlaky && !info.flaky_allowed);
    if (r.grade == Grade::kFlaky && info.flaky_allowed)
      xml += "      <system-out>FLAKY (allowed): " + XmlEscape(r.reason) + "</system-out>\n";
    if (failing) {
      // One element per testcase is what reporters read: every rule in its message.
      std::string message;
      for (const auto& f : FindingsOf(r))
        message += (message.empty() ? "" : " | ") + f.rule + ": " + f.why;
      const char* element = r.grade == Grade::kError ? "error" : "failure";
      const std::string type = r.grade == Grade::kFlaky ? "FLAKY: " + r.rule : r.rule;
      xml += std::string("      <") + element + " message=\"" + XmlEscape(message) + "\" type=\"" +
             XmlEscape(type) + "\">" + XmlEscape(FindingsText(r) + FormatCalls(r.transcript)) +
             "</" + element + ">\n";
    }
    if (r.grade == Grade::kWarn)
      xml += "      <system-out>WARN: " + XmlEscape(r.reason) + "</system-out>\n";
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string JsonReport(const RunSummary& s, const RunInfo& info) {
  nlohmann::ordered_json doc;
  doc["schemaVersion"] = kReportSchemaVersion;
  doc["tool"] = {{"name", "flexconform"}, {"version", FLEXKIT_VERSION}};
  doc["driver"] = info.driver;
  doc["run"] = {{"driverName", info.driver_name}, {"driverSha256", info.driver_sha256},
                {"profile", info.profile_file},   {"kubernetes", info.kubernetes},
                {"fixture", info.fixture},        {"seed", info.seed},
                {"hostname", info.hostname},      {"started", info.started}};
  auto counts = Counts(s);
  doc["summary"] = {{"cases", s.results.size()},       {"passed", counts[Grade::kPass]},
                    {"failed", counts[Grade::kFail]},  {"warned", counts[Grade::kWarn]},
                    {"skipped", counts[Grade::kSkip]}, {"errors", counts[Grade::kError]},
                    {"flaky", counts[Grade::kFlaky]}};
  doc["wall_ms"] = s.wall.count();
  doc["driver_ms"] = s.driver_time.count();
  doc["interrupted"] = s.interrupted;
  doc["rules_broken"] = nlohmann::ordered_json::array();
  for (const auto& [rule, cases] : DistinctRules(s))
    doc["rules_broken"].push_back({{"rule", rule}, {"cases", cases}});
  doc["cases"] = nlohmann::ordered_json::array();
  for (const auto& r : s.results) doc["cases"].push_back(ResultToJson(r));
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
    report.info.hostname = run.at("hostname").get<std::string>();
    report.info.started = run.at("started").get<std::string>();
    report.summary.wall = std::chrono::milliseconds(doc.at("wall_ms").get<std::int64_t>());
    report.summary.driver_time = std::chrono::milliseconds(doc.at("driver_ms").get<std::int64_t>());
    report.summary.interrupted = doc.at("interrupted").get<bool>();
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

LoadedReport MergeReports(const std::vector<std::string>& paths) {
  if (paths.empty()) throw std::runtime_error("merge: no reports given");
  LoadedReport merged;
  std::map<std::string, std::string> seen;  // case -> the report that had it
  for (const auto& path : paths) {
    LoadedReport shard = ReadJsonReport(path);
    if (path == paths.front()) {
      merged.info = shard.info;
    } else if (shard.info.driver_sha256 != merged.info.driver_sha256) {
      throw std::runtime_error("merge: " + path + " graded another driver (sha256 " +
                               shard.info.driver_sha256 + ", not " + merged.info.driver_sha256 +
                               " as in " + paths.front() + ")");
    }
    merged.summary.wall = std::max(merged.summary.wall, shard.summary.wall);
    merged.summary.driver_time += shard.summary.driver_time;
    merged.summary.interrupted |= shard.summary.interrupted;
    for (auto& r : shard.summary.results) {
      if (auto [it, fresh] = seen.emplace(r.name, path); !fresh)
        throw std::runtime_error("merge: case " + r.name + " is in both " + it->second + " and " +
                                 path + " (shards of one run never share a case)");
      merged.summary.results.push_back(std::move(r));
    }
  }
  return merged;
}

void WriteReport(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text) || !out.flush())
    throw std::runtime_error("write report " + path + ": cannot write");
}

}  // namespace flexkit::conform
