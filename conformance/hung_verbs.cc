#include "conformance/hung_verbs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace flexkit::conform {
namespace {

bool IsVerb(const std::string& word) {
  const auto& verbs = KubeletVerbs();
  return std::find(verbs.begin(), verbs.end(), word) != verbs.end();
}

std::string SecondsText(Millis ms) {
  std::ostringstream out;
  out << ms.count() / 1000.0 << " s";
  return out.str();
}

}  // namespace

void HangLog::Add(const Hang& hang, bool at_shortened_deadline) const {
  const std::string line = std::string(at_shortened_deadline ? "rehang" : "hang") + "\t" +
                           hang.verb + "\t" + std::to_string(hang.deadline.count()) + "\t" +
                           hang.case_name + "\n";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the bound is lost, not the verdict
  [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

std::vector<std::pair<bool, Hang>> HangLog::Read() const {
  std::vector<std::pair<bool, Hang>> out;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind, verb, ms, case_name;
    if (!std::getline(fields, kind, '\t') || !std::getline(fields, verb, '\t') ||
        !std::getline(fields, ms, '\t') || !std::getline(fields, case_name))
      continue;
    try {
      out.push_back({kind == "rehang", {verb, Millis(std::stoll(ms)), case_name}});
    } catch (const std::exception&) {
    }
  }
  return out;
}

std::vector<Hang> HangLog::FirstHangs() const {
  std::vector<Hang> first;
  for (const auto& [rehang, hang] : Read()) {
    if (rehang) continue;
    if (std::none_of(first.begin(), first.end(),
                     [&hang](const Hang& h) { return h.verb == hang.verb; }))
      first.push_back(hang);
  }
  return first;
}

std::vector<Hang> HangLog::Rehangs() const {
  std::vector<Hang> out;
  for (const auto& [rehang, hang] : Read())
    if (rehang) out.push_back(hang);
  return out;
}

Millis ShortenedDeadline(Millis hung_at) {
  return std::max<Millis>(std::chrono::seconds(2), hung_at / 5);
}

DriverProfile WithHungVerbsShortened(const DriverProfile& profile, const std::vector<Hang>& hangs) {
  DriverProfile bounded = profile;
  for (const auto& h : hangs) {
    const Millis shorter = ShortenedDeadline(h.deadline);
    if (shorter < profile.TimeoutFor(h.verb)) bounded.verb_timeouts[h.verb] = shorter;
  }
  return bounded;
}

sim::ProcessResult HangRecorder::Run(const sim::ProcessSpec& spec) {
  auto result = inner_.Run(spec);
  if (result.harness_deadline_hit && !spec.args.empty() && IsVerb(spec.args[0])) {
    const bool shortened = std::any_of(shortened_.begin(), shortened_.end(),
                                       [&spec](const Hang& h) { return h.verb == spec.args[0]; });
    log_.Add({spec.args[0], spec.harness_deadline, case_name_}, shortened);
  }
  return result;
}

void ExplainShortenedHangs(CaseResult& r, const std::vector<Hang>& shortened,
                           const DriverProfile& profile) {
  for (auto& f : r.findings) {
    if (f.rule.rfind("F16", 0) != 0) continue;
    for (const auto& h : shortened) {
      if (f.why.rfind(h.verb + ":", 0) != 0) continue;
      f.why += " (flexconform gave " + h.verb + " " +
               SecondsText(std::min(ShortenedDeadline(h.deadline), profile.TimeoutFor(h.verb))) +
               ", not " + SecondsText(profile.TimeoutFor(h.verb)) + ": it already hung for " +
               SecondsText(h.deadline) + " in " + h.case_name + " of this run)";
      break;
    }
  }
}

std::vector<std::string> HangNotes(const HangLog& log, const DriverProfile& profile) {
  std::map<std::string, int> rehangs;
  for (const auto& h : log.Rehangs()) ++rehangs[h.verb];
  std::vector<std::string> notes;
  for (const auto& h : log.FirstHangs()) {
    const Millis shorter = ShortenedDeadline(h.deadline);
    if (shorter >= profile.TimeoutFor(h.verb)) continue;
    notes.push_back(h.verb + " hung (still running after " + SecondsText(h.deadline) + ") in " +
                    h.case_name + ", so the cases started after it gave " + h.verb + " " +
                    SecondsText(shorter) + ", not " + SecondsText(profile.TimeoutFor(h.verb)) +
                    "; " + std::to_string(rehangs[h.verb]) + " more " + h.verb +
                    " call(s) hung at that deadline");
  }
  return notes;
}

}  // namespace flexkit::conform
