#pragma once
// The three ways a run is reported: a live console (progress, elapsed,
// colour only on a terminal), JUnit XML (one testsuite, one testcase per
// case, <skipped>/<failure> with messages; what Jenkins, GitLab and GitHub
// reporters read) and JSON (every case with verdict, duration and
// transcript). Everything reported is already redacted.
#include <ostream>
#include <string>

#include "conformance/catalog.h"
#include "conformance/runner.h"

namespace flexkit::conform {

class ConsoleReporter {
 public:
  ConsoleReporter(std::ostream& out, bool colour) : out_(out), colour_(colour) {}
  void CaseStarted(const Case& c, std::size_t index, std::size_t total);
  void CaseFinished(const CaseResult& r, std::size_t index, std::size_t total);
  void Summary(const RunSummary& summary);

 private:
  std::string Paint(Grade grade, const std::string& text) const;
  std::ostream& out_;
  bool colour_;
};

std::string JunitXml(const RunSummary& summary, const std::string& suite_name);
std::string JsonReport(const RunSummary& summary, const std::string& driver);
// Writes `text` to `path`; throws naming the path.
void WriteReport(const std::string& path, const std::string& text);

}  // namespace flexkit::conform
