#include "conformance/runner.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "conformance/background_process.h"
#include "conformance/call_timing.h"
#include "conformance/leak_audit.h"
#include "simulator/boost_process_runner.h"

namespace flexkit::conform {
namespace {

constexpr const char* kMarker = ".flexconform-run";

std::string Join(const std::vector<std::string>& lines, const std::string& sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : sep) + l;
  return out;
}

void SetFail(CaseResult& r, const std::string& rule, const std::string& why) {
  if (r.grade == Grade::kFail) {
    r.reason += "; " + why;
    return;
  }
  r.grade = Grade::kFail;
  r.rule = rule;
  r.reason = why;
}

CaseResult RunOne(const DriverProfile& profile, const Case& c, const std::string& case_dir,
                  const std::string& unique, const RunSettings& settings,
                  sim::ProcessRunner& runner) {
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  if (auto it = profile.skip.find(c.name); it != profile.skip.end()) {
    r.grade = Grade::kSkip;
    r.reason = "profile: " + it->second;
    return r;
  }
  if (std::string why = c.applies(profile); !why.empty()) {
    r.grade = Grade::kSkip;
    r.reason = why;
    return r;
  }
  if (::geteuid() != 0) {
    r.grade = Grade::kSkip;
    r.reason = "privilege: needs root (each node is a private mount namespace)";
    return r;
  }
  std::filesystem::create_directories(case_dir);
  const std::string run_dir = std::filesystem::path(case_dir).parent_path().string();
  const HostSnapshot host_before = TakeHostSnapshot(run_dir);
  {
    std::unique_ptr<Fixture> fixture;
    CallTiming timing(runner);
    std::unique_ptr<CaseContext> ctx;
    std::vector<NodeSnapshot> node_before;
    try {
      fixture = MakeFixture(profile.fixture, settings.flexconform_dir);
      ctx = std::make_unique<CaseContext>(profile, case_dir, unique, settings.repeat, *fixture,
                                          timing);
      ctx->transcript().SetCallObserver(
          [&timing](const sim::CallRecord& call) { timing.Observe(call); });
      std::vector<sim::Node*> nodes;
      for (std::size_t i = 0; i < ctx->node_count(); ++i) nodes.push_back(&ctx->node(i));
      fixture->Start(case_dir, nodes);
      for (auto* n : nodes) node_before.push_back(TakeNodeSnapshot(*n));
    } catch (const std::exception& e) {
      SetFail(r, "environment", std::string("setting up the case: ") + e.what());
    }
    if (ctx && r.grade != Grade::kFail) {
      try {
        c.run(*ctx);
      } catch (const CaseSkip& e) {
        r.grade = Grade::kSkip;
        r.reason = e.what();
      } catch (const CaseFailure& e) {
        SetFail(r, e.rule, e.what());
      } catch (const std::exception& e) {
        SetFail(r, "harness", std::string("the case stopped: ") + e.what());
      }
      auto teardown = ctx->tracker().UnwindAll();
      if (!teardown.empty())
        SetFail(r, "protocol §7: teardown succeeds", "teardown: " + Join(teardown, "; "));
      std::set<pid_t> fixture_pids;
      for (pid_t p : fixture->Pids()) fixture_pids.insert(p);
      std::vector<std::string> leaks;
      for (std::size_t i = 0; i < node_before.size(); ++i) {
        auto l =
            CompareNode(ctx->node(i), node_before[i], TakeNodeSnapshot(ctx->node(i)), fixture_pids);
        leaks.insert(leaks.end(), l.begin(), l.end());
      }
      if (!leaks.empty())
        SetFail(r, "F26 (leak audit: a case leaves nothing behind)", Join(leaks, "; "));
      if (r.grade == Grade::kPass && !ctx->warnings().empty()) {
        r.grade = Grade::kWarn;
        r.reason = Join(ctx->warnings(), "; ");
        r.rule = "kubelet tolerates it, but it is wrong (flexvolume-protocol §3.2 strict)";
      }
      r.warnings = ctx->warnings();
      r.transcript = ctx->transcript().ToJson();
      r.driver_time = ctx->driver_time();
    }
    if (fixture) {
      auto problems = fixture->Stop();
      if (!problems.empty()) SetFail(r, "fixture", Join(problems, "; "));
      if (ctx) {
        r.timeline.calls = timing.Windows();
        r.timeline.backend = ReadBackendEvents(fixture->RequestLogs(), [&ctx](std::string text) {
          return ctx->Redact(std::move(text));
        });
      }
    }
  }  // nodes end here: their namespaces and holders are gone
  auto host_leaks = FindHostLeaks(host_before, TakeHostSnapshot(run_dir), {case_dir, unique});
  if (!host_leaks.empty()) {
    std::vector<std::string> lines;
    if (settings.keep) {
      for (const auto& l : host_leaks) lines.push_back(l.what + " (kept: --keep)");
    } else {
      lines = ReclaimHostLeaks(host_leaks);
    }
    SetFail(r, "F26 (leak audit: a case leaves nothing behind)", Join(lines, "; "));
  }
  if (!settings.keep) {
    std::error_code ec;
    std::filesystem::remove_all(case_dir, ec);
  }
  return r;
}

}  // namespace

int RunSummary::ExitCode() const {
  for (const auto& r : results) {
    if (r.grade == Grade::kFail) return 1;
  }
  return 0;
}

std::vector<std::string> SweepKilledRuns(const std::string& run_root) {
  std::vector<std::string> swept;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(run_root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("flexconform-", 0) != 0 || !std::filesystem::exists(e.path() / kMarker))
      continue;
    std::ifstream in(e.path() / kMarker);
    pid_t pid = 0;
    in >> pid;
    if (pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM)) continue;  // still running
    for (const auto& loop : LoopDevicesUnder(e.path().string())) {
      RunToCompletion({"/sbin/losetup", "-d", loop}, "/dev/null");
    }
    std::filesystem::remove_all(e.path(), ec);
    swept.push_back(e.path().string());
  }
  return swept;
}

RunSummary RunCases(const DriverProfile& profile, const std::vector<const Case*>& cases,
                    const RunSettings& settings) {
  RunSummary summary;
  summary.run_dir = settings.run_root + "/flexconform-" + std::to_string(::getpid());
  std::filesystem::create_directories(summary.run_dir);
  std::ofstream(summary.run_dir + "/" + kMarker) << ::getpid() << "\n";
  sim::BoostProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (settings.interrupted && settings.interrupted->load()) {
      summary.interrupted = true;
      break;
    }
    if (settings.on_start) settings.on_start(*cases[i], i, cases.size());
    const auto case_start = std::chrono::steady_clock::now();
    const std::string unique = "r" + std::to_string(::getpid() % 100000) + "c" + std::to_string(i);
    CaseResult r = RunOne(profile, *cases[i], summary.run_dir + "/" + std::to_string(i), unique,
                          settings, runner);
    r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - case_start);
    summary.driver_time += r.driver_time;
    if (settings.on_result) settings.on_result(r, i, cases.size());
    summary.results.push_back(std::move(r));
  }
  summary.wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (!settings.keep) {
    std::error_code ec;
    std::filesystem::remove_all(summary.run_dir, ec);
  }
  return summary;
}

}  // namespace flexkit::conform
