#include "conformance/runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>

#include "conformance/background_process.h"
#include "conformance/call_timing.h"
#include "conformance/case_watchdog.h"
#include "conformance/hung_verbs.h"
#include "conformance/leak_audit.h"
#include "simulator/boost_process_runner.h"
#include "simulator/plugin_name.h"

namespace flexkit::conform {
namespace {

constexpr const char* kMarker = ".flexconform-run";
// The marker's second word in a run started with --keep.
constexpr const char* kKeptMark = "keep";

std::string Join(const std::vector<std::string>& lines, const std::string& sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : sep) + l;
  return out;
}

void SetFail(CaseResult& r, const std::string& rule, const std::string& why) {
  AddFinding(r, {Grade::kFail, rule, why});
}

// The harness, not the driver, broke: ERROR, never a driver FAIL.
void SetError(CaseResult& r, const std::string& what, const std::string& why) {
  AddFinding(r, {Grade::kError, "harness", what + ": " + why});
}

// Why the case is not run at all, or nothing.
std::optional<CaseResult> Skipped(const DriverProfile& profile, const Case& c) {
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  r.grade = Grade::kSkip;
  if (auto it = profile.skip.find(c.name); it != profile.skip.end()) {
    r.reason = "profile: " + it->second;
  } else if (std::string why = c.applies(profile); !why.empty()) {
    r.reason = why;
  } else if (::geteuid() != 0) {
    r.reason = "privilege: needs root (each node is a private mount namespace)";
  } else {
    return std::nullopt;
  }
  return r;
}

// `run_start`: the host as the run found it. What a case leaves is told
// apart by its marks (its own case dir and unique prefix, which nothing had
// before the case began), so the run's start serves as every case's
// "before" and each case takes one snapshot, not two.
CaseResult RunOne(const DriverProfile& profile, const Case& c, const std::string& case_dir,
                  const std::string& unique, const RunSettings& settings,
                  const HostSnapshot& run_start, sim::ProcessRunner& runner) {
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  std::filesystem::create_directories(case_dir);
  const std::string run_dir = std::filesystem::path(case_dir).parent_path().string();
  sim::Redactor redactor;  // the case's secrets, kept past its context
  {
    std::unique_ptr<Fixture> fixture;
    CallTiming timing(runner);
    std::unique_ptr<CaseContext> ctx;
    std::vector<NodeSnapshot> node_before;
    try {
      fixture = MakeFixture(profile.fixture, settings.flexconform_dir);
      ctx = std::make_unique<CaseContext>(profile, case_dir, unique, settings.repeat, *fixture,
                                          timing, c.nodes);
      ctx->transcript().SetCallObserver(
          [&timing](const sim::CallRecord& call) { timing.Observe(call); });
      std::vector<sim::Node*> nodes;
      for (std::size_t i = 0; i < ctx->node_count(); ++i) nodes.push_back(&ctx->node(i));
      fixture->Start(case_dir, nodes);
      for (auto* n : nodes) node_before.push_back(TakeNodeSnapshot(*n));
    } catch (const std::exception& e) {
      SetError(r, "setting up the case", e.what());
    }
    if (ctx && r.findings.empty()) {
      std::string stopped;  // a harness exception
      bool skipped = false;
      try {
        c.run(*ctx);
      } catch (const CaseSkip& e) {
        skipped = true;
        r.reason = e.what();
      } catch (const CaseFailure& e) {
        // Recorded by Fail; a CaseFailure thrown directly is added here.
        if (!e.recorded) ctx->Record(e.rule, e.what());
      } catch (const std::exception& e) {
        stopped = e.what();
      }
      auto teardown = ctx->tracker().UnwindAll();
      // The case's findings, per-call ones included, in the order seen.
      for (const auto& f : ctx->findings()) AddFinding(r, f);
      if (!stopped.empty()) SetError(r, "the case stopped", stopped);
      std::vector<std::string> unexplained;
      for (const auto& t : teardown) {
        if (!ctx->Restates(t)) unexplained.push_back(t);
      }
      if (!unexplained.empty())
        SetFail(r, "teardown-succeeds: kubelet's teardown of what the case set up succeeds",
                "teardown: " + Join(unexplained, "; "));
      // A SKIP after a rule was broken stays a FAIL.
      if (skipped && r.findings.empty()) r.grade = Grade::kSkip;
      std::set<pid_t> fixture_pids;
      for (pid_t p : fixture->Pids()) fixture_pids.insert(p);
      std::vector<std::string> leaks;
      for (std::size_t i = 0; i < node_before.size(); ++i) {
        auto l =
            CompareNode(ctx->node(i), node_before[i], TakeNodeSnapshot(ctx->node(i)), fixture_pids);
        leaks.insert(leaks.end(), l.begin(), l.end());
      }
      if (!leaks.empty())
        SetFail(r, "F26 no-leaks: a case leaves nothing behind", Join(leaks, "; "));
      if (r.grade == Grade::kPass && !ctx->warnings().empty()) {
        r.grade = Grade::kWarn;
        r.reason = Join(ctx->warnings(), "; ");
        r.rule = "warn: kubelet tolerates it, but it is wrong";
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
    if (ctx) redactor = ctx->redactor();
  }  // nodes end here: their namespaces and holders are gone
  auto host_leaks = FindHostLeaks(run_start, TakeHostSnapshot(run_dir), {case_dir, unique});
  if (!host_leaks.empty()) {
    std::vector<std::string> lines;
    if (settings.keep) {
      for (const auto& l : host_leaks) lines.push_back(l.what + " (kept: --keep)");
    } else {
      lines = ReclaimHostLeaks(host_leaks);
    }
    SetFail(r, "F26 no-leaks: a case leaves nothing behind", Join(lines, "; "));
  }
  // Whys quote drivers' replies and leftover processes' command lines,
  // which may carry a secret (a Failure naming the user, a mount helper's
  // password=): none leaves the case unredacted.
  r.reason = redactor.Apply(std::move(r.reason));
  for (auto& f : r.findings) f.why = redactor.Apply(std::move(f.why));
  for (auto& w : r.warnings) w = redactor.Apply(std::move(w));
  if (!settings.keep) {
    std::error_code ec;
    std::filesystem::remove_all(case_dir, ec);
  }
  return r;
}

}  // namespace

int RunSummary::ExitCode(bool flaky_allowed) const {
  bool error = false;
  for (const auto& r : results) {
    if (r.grade == Grade::kFail || (r.grade == Grade::kFlaky && !flaky_allowed)) return 1;
    error |= r.grade == Grade::kError;
  }
  return error ? 2 : 0;
}

std::string InitRefusal(const std::string& driver, const std::string& driver_name) {
  sim::BoostProcessRunner runner;
  sim::ProcessSpec spec;
  spec.executable = driver;
  spec.args = {"init"};
  spec.harness_deadline = std::chrono::seconds(10);
  const auto result = runner.Run(spec);
  // kubelet's prober logs this and leaves the driver out of its plugins.
  const std::string probe =
      "kubelet does not register the driver (\"Error dynamically probing "
      "plugins: Error creating Flexvolume plugin from directory " +
      sim::EscapeDriverName(driver_name) + ", skipping\")";
  const std::string output = nlohmann::json(result.combined.substr(0, 200))
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!result.spawn_error.empty()) return "init could not be run: " + result.spawn_error;
  if (result.harness_deadline_hit || result.output_held_open)
    return "init did not answer within 10 s (or a child kept its output open): kubelet's probe "
           "would hang and the driver is never registered";
  const auto verdict = sim::Judge("init", result.exit, result.combined);
  switch (verdict.outcome) {
    case sim::Outcome::kDecodeError:
      return probe + ": kubelet cannot decode init's reply " + output + ": " + verdict.error;
    case sim::Outcome::kNotSupported:
    case sim::Outcome::kFailure:
      return probe + ": init answered " + output + " (" + verdict.error + "), not Success";
    case sim::Outcome::kSuccess:
      break;
  }
  if (!verdict.status || !verdict.status->capabilities) {
    return "init answered \"capabilities\": null: kubelet's NewFlexVolumePlugin dereferences the "
           "nil pointer (a panic in the probe), so the driver is never registered";
  }
  return "";
}

RunSummary RefusedRun(const std::vector<const Case*>& cases, const std::string& refusal) {
  constexpr const char* kInitCase = "protocol/init-reply";
  RunSummary summary;
  CaseResult init;
  init.name = kInitCase;
  init.tags = {"protocol", "init"};
  AddFinding(init, {Grade::kFail,
                    "F8 init-capabilities: init answers Success with boolean capabilities, "
                    "or kubelet refuses to register the driver",
                    refusal});
  summary.results.push_back(init);
  for (const auto* c : cases) {
    if (c->name == kInitCase) continue;
    CaseResult r;
    r.name = c->name;
    r.tags = c->tags;
    r.grade = Grade::kSkip;
    r.reason = std::string(kInitCase) +
               ": kubelet refuses to register the driver, so it never "
               "calls another verb";
    summary.results.push_back(std::move(r));
  }
  return summary;
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
    std::string kept;
    in >> pid >> kept;
    if (kept == kKeptMark) continue;  // --keep: the user's to inspect and remove
    if (pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM)) continue;  // still running
    for (const auto& loop : LoopDevicesUnder(e.path().string())) {
      RunToCompletion({"/sbin/losetup", "-d", loop}, "/dev/null");
    }
    std::filesystem::remove_all(e.path(), ec);
    swept.push_back(e.path().string());
  }
  return swept;
}

namespace {

// One run of a case: its first (attempt 0), or a retry of a FAIL.
struct Attempt {
  std::size_t index;  // in the selection
  int attempt;
  // Names the case dir and ends the unique prefix: a retry gets fresh ones.
  std::string Suffix() const {
    return std::to_string(index) + (attempt == 0 ? "" : "t" + std::to_string(attempt));
  }
};

// A worker process runs one case and hands its result back in this file.
std::string ResultFile(const std::string& run_dir, const Attempt& a) {
  return run_dir + "/" + a.Suffix() + ".result.json";
}

// Where the worker marks its driver calls (ProgressMark).
std::string ProgressFile(const std::string& run_dir, const Attempt& a) {
  return run_dir + "/" + a.Suffix() + ".progress";
}

// The child side of a worker: runs case `index` and exits. SIGINT/SIGTERM
// stay blocked, so the case and its cleanup always finish; the parent
// decides not to start more.
[[noreturn]] void RunWorker(const DriverProfile& profile, const Case& c, const Attempt& a,
                            const std::string& unique, const std::string& run_dir,
                            const RunSettings& settings, const HostSnapshot& run_start,
                            const HangLog& hangs) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop, nullptr);
  int code = 0;
  try {
    sim::BoostProcessRunner runner;
    ProgressMark marked(runner, ProgressFile(run_dir, a));
    std::vector<Hang> shortened;  // the verbs that hung in an earlier case, given less time
    for (const auto& h : hangs.FirstHangs()) {
      if (ShortenedDeadline(h.deadline) < profile.TimeoutFor(h.verb)) shortened.push_back(h);
    }
    HangRecorder recorded(marked, hangs, c.name, shortened);
    CaseResult r = RunOne(WithHungVerbsShortened(profile, shortened), c, run_dir + "/" + a.Suffix(),
                          unique, settings, run_start, recorded);
    ExplainShortenedHangs(r, shortened, profile);
    const std::string path = ResultFile(run_dir, a);
    {
      std::ofstream out(path + ".tmp", std::ios::trunc);
      out << ResultToJson(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (!out.flush()) code = 3;
    }
    if (code == 0 && std::rename((path + ".tmp").c_str(), path.c_str()) != 0) code = 3;
  } catch (const std::exception& e) {
    std::cerr << "flexconform: case " << c.name << ": " << e.what() << "\n";
    code = 3;
  }
  std::cout.flush();
  std::cerr.flush();
  std::exit(code);  // exit, not _exit: sanitizers check the worker too
}

// The parent side: the worker's result, or a harness ERROR saying why
// there is none.
CaseResult CollectWorker(const Case& c, const Attempt& a, const std::string& run_dir, int status) {
  const std::string path = ResultFile(run_dir, a);
  std::ifstream in(path);
  std::string why;
  if (in) {
    try {
      auto r = ResultFromJson(nlohmann::ordered_json::parse(in));
      std::error_code ec;
      std::filesystem::remove(path, ec);
      return r;
    } catch (const std::exception& e) {
      why = std::string("its result is unreadable: ") + e.what();
    }
  } else if (WIFSIGNALED(status)) {
    why = "its process was killed by signal " + std::to_string(WTERMSIG(status));
  } else {
    why = "its process exited " + std::to_string(WEXITSTATUS(status)) + " without a result";
  }
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  SetError(r, "running the case", why);
  return r;
}

// A worker whose harness stalled: what it waited in, then it and what its
// case holds on the host are stopped and reclaimed.
CaseResult StopStalledWorker(const Case& c, pid_t pid, const std::string& case_dir,
                             const std::string& unique, const std::string& stalled_for,
                             const RunSettings& settings) {
  // Read before SIGSTOP, which moves every thread to do_signal_stop.
  const std::string waits = DescribeWaits(pid);
  ::kill(pid, SIGSTOP);  // no new process while its remains are listed
  const auto remains =
      FindHostLeaks(HostSnapshot{}, TakeHostSnapshot(case_dir, pid), CaseMarks{case_dir, unique});
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::vector<std::string> left;
  if (settings.keep) {
    for (const auto& l : remains) left.push_back(l.what + " (kept: --keep)");
  } else {
    left = ReclaimHostLeaks(remains);
    std::error_code ec;
    std::filesystem::remove_all(case_dir, ec);
  }
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  SetError(r, "running the case",
           "flexconform's harness stalled (a flexconform bug: please report it with this "
           "message): " +
               stalled_for + ", so the case was stopped; " + waits +
               (left.empty() ? "" : "; " + Join(left, "; ")));
  return r;
}

}  // namespace

RunSummary RunCases(const DriverProfile& profile, const std::vector<const Case*>& cases,
                    const RunSettings& settings) {
  RunSummary summary;
  summary.run_dir = settings.run_root + "/flexconform-" + std::to_string(::getpid());
  std::filesystem::create_directories(summary.run_dir);
  std::ofstream(summary.run_dir + "/" + kMarker) << ::getpid() << "\n"
                                                 << (settings.keep ? kKeptMark : "") << "\n";
  const HostSnapshot run_start = TakeHostSnapshot(summary.run_dir);  // workers inherit it
  const HangLog hangs(summary.run_dir + "/hangs");
  const std::size_t jobs = static_cast<std::size_t>(std::max(1, settings.jobs));
  // Cases tagged `waits` spend their time waiting out a dead or hung
  // backend's timeouts, using no CPU: as many more of them as `jobs` may run
  // beside the others (none with -j 1, which runs one case at a time).
  const std::size_t waiting_slots = jobs > 1 ? jobs : 0;
  auto waits = [&cases](std::size_t index) {
    const auto& tags = cases[index]->tags;
    return std::find(tags.begin(), tags.end(), "waits") != tags.end();
  };
  struct Running {
    Attempt attempt;
    std::chrono::steady_clock::time_point start;
    std::chrono::system_clock::time_point started_at;  // to compare with its progress mark
    bool in_waiting_slot = false;
    int pidfd = -1;  // readable when the worker ends
    std::string unique;
  };
  const auto stall_limit =
      settings.stall_limit.count() > 0 ? settings.stall_limit : StallLimit(profile);
  std::map<pid_t, Running> running;
  std::vector<std::optional<CaseResult>> results(cases.size());
  // Slow cases start first, so the run does not end waiting on one of them.
  std::vector<std::size_t> order(cases.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&cases](std::size_t i) {
    const auto& tags = cases[i]->tags;
    return std::find(tags.begin(), tags.end(), "slow") != tags.end();
  });
  std::deque<Attempt> pending;
  for (std::size_t i : order) pending.push_back({i, 0});
  std::map<std::size_t, CaseResult> first_failure;  // of a case being retried
  std::size_t finished = 0;
  std::string failed_first;  // --fail-fast: the case that stopped the run
  auto report = [&](std::size_t index, CaseResult r) {
    if (settings.on_result) settings.on_result(r, finished++, cases.size());
    const bool failing =
        r.grade == Grade::kFail || (r.grade == Grade::kFlaky && !settings.flaky_allowed);
    if (settings.fail_fast && failing && failed_first.empty()) failed_first = r.name;
    results[index] = std::move(r);
  };
  std::size_t in_waiting_slots = 0;
  // The next case to start, in order: a `waits` case for a free waiting
  // slot; for a free CPU slot another case, or a `waits` case when no other
  // is left.
  auto next_startable = [&]() {
    auto first = [&](bool waiting) {
      return std::find_if(pending.begin(), pending.end(),
                          [&](const Attempt& a) { return waits(a.index) == waiting; });
    };
    if (in_waiting_slots < waiting_slots) {
      if (auto it = first(true); it != pending.end()) return it;
    }
    if (running.size() - in_waiting_slots < jobs) {
      if (auto it = first(false); it != pending.end()) return it;
      return pending.begin();
    }
    return pending.end();
  };
  // A worker's result: reported, or its case queued again (--retries).
  auto conclude = [&](const Attempt& attempt, CaseResult r,
                      std::chrono::steady_clock::time_point case_start) {
    const std::size_t index = attempt.index;
    r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - case_start);
    // A FAIL is run again; an ERROR only once a FAIL started the retries.
    const bool failed = r.grade == Grade::kFail || r.grade == Grade::kError;
    if (failed && attempt.attempt < settings.retries &&
        (r.grade == Grade::kFail || first_failure.count(index))) {
      first_failure.emplace(index, std::move(r));
      pending.push_front({index, attempt.attempt + 1});  // before new cases
      return;
    }
    if (auto first = first_failure.find(index); first != first_failure.end()) {
      CaseResult verdict = std::move(first->second);
      first_failure.erase(first);
      const std::string run = std::to_string(attempt.attempt + 1);
      if (!failed) {
        // The failing run's findings stand; the gate decides (--allow-flaky).
        verdict.grade = Grade::kFlaky;
        verdict.reason = "FAILed, then " + std::string(GradeName(r.grade)) + " on run " + run +
                         " (--retries): " + verdict.reason;
      } else {
        verdict.reason += " (FAILed on all " + run + " runs)";
      }
      verdict.duration += r.duration;
      verdict.driver_time += r.driver_time;
      r = std::move(verdict);
    }
    report(index, std::move(r));
  };
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    for (auto it = next_startable(); it != pending.end(); it = next_startable()) {
      if (settings.interrupted && settings.interrupted->load()) {
        summary.interrupted = true;
        break;
      }
      if (!failed_first.empty()) break;
      const Attempt next = *it;
      pending.erase(it);
      const bool waiting_slot = waits(next.index) && in_waiting_slots < waiting_slots;
      const Case& c = *cases[next.index];
      if (next.attempt == 0) {
        if (settings.on_start) settings.on_start(c, next.index, cases.size());
        if (auto skipped = Skipped(profile, c)) {
          report(next.index, std::move(*skipped));
          continue;
        }
      }
      // Every case of the run shares the run's pid; the index (and the
      // attempt) tell them apart.
      const std::string unique = "r" + std::to_string(::getpid() % 100000) + "c" + next.Suffix();
      std::cout.flush();  // the worker must not print what the parent buffered
      std::cerr.flush();
      const pid_t pid = ::fork();
      if (pid == 0)
        RunWorker(profile, c, next, unique, summary.run_dir, settings, run_start, hangs);
      if (pid < 0) {
        CaseResult r;
        r.name = c.name;
        r.tags = c.tags;
        SetError(r, "starting the case", std::string("fork: ") + std::strerror(errno));
        report(next.index, std::move(r));
      } else {
        const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (pidfd < 0) {
          const int err = errno;
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
          throw std::system_error(err, std::system_category(), "pidfd_open of a case worker");
        }
        running[pid] = {next,
                        std::chrono::steady_clock::now(),
                        std::chrono::system_clock::now(),
                        waiting_slot,
                        pidfd,
                        unique};
        if (waiting_slot) ++in_waiting_slots;
      }
    }
    if (running.empty()) break;
    // Until a worker ends; every second, a look for one whose harness stalled.
    std::vector<pollfd> ends;
    for (const auto& [pid, run] : running) ends.push_back({run.pidfd, POLLIN, 0});
    if (::poll(ends.data(), ends.size(), 1000) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::system_category(), "poll the case workers");
    }
    std::vector<std::pair<pid_t, CaseResult>> ended;
    for (const auto& [pid, run] : running) {
      const Case& c = *cases[run.attempt.index];
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ended.emplace_back(pid, CollectWorker(c, run.attempt, summary.run_dir, status));
        continue;
      }
      const auto progress = ReadProgress(ProgressFile(summary.run_dir, run.attempt));
      const auto last = progress ? progress->at : run.started_at;
      const auto quiet = std::chrono::system_clock::now() - last;
      if (quiet < stall_limit) continue;
      const std::string stalled_for =
          "no driver call started or ended for " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(quiet).count()) +
          " s (the last mark: " + (progress ? progress->last : "none") + ")";
      ended.emplace_back(
          pid, StopStalledWorker(c, pid, summary.run_dir + "/" + run.attempt.Suffix(), run.unique,
                                 stalled_for, settings));
    }
    for (auto& [pid, result] : ended) {
      const Running run = running.at(pid);
      running.erase(pid);
      ::close(run.pidfd);
      std::error_code ec;
      std::filesystem::remove(ProgressFile(summary.run_dir, run.attempt), ec);
      if (run.in_waiting_slot) --in_waiting_slots;
      conclude(run.attempt, std::move(result), run.start);
    }
  }
  for (auto& r : results) {
    if (!r) continue;  // never started: the run was interrupted
    summary.driver_time += r->driver_time;
    summary.results.push_back(std::move(*r));
  }
  summary.wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (!failed_first.empty() && summary.results.size() < cases.size())
    summary.notes.push_back("--fail-fast: stopped after " + failed_first + " failed; " +
                            std::to_string(cases.size() - summary.results.size()) + " of " +
                            std::to_string(cases.size()) + " cases not run");
  for (auto& note : HangNotes(hangs, profile)) summary.notes.push_back(std::move(note));
  if (!settings.keep) {
    std::error_code ec;
    std::filesystem::remove_all(summary.run_dir, ec);
  }
  return summary;
}

}  // namespace flexkit::conform
