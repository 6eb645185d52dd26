#include "conformance/runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
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
#include "conformance/case_scheduler.h"
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

// The F-codes a rule names: "F1/F2/F3 one-json-reply: ..." -> F1, F2, F3.
std::set<std::string> FCodes(const std::string& rule) {
  std::set<std::string> codes;
  const std::string head = rule.substr(0, rule.find(' '));
  std::size_t from = 0;
  while (from < head.size()) {
    const std::size_t slash = head.find('/', from);
    const std::string code = head.substr(from, slash == std::string::npos ? slash : slash - from);
    if (code.size() > 1 && code[0] == 'F' && std::isdigit(static_cast<unsigned char>(code[1])))
      codes.insert(code);
    if (slash == std::string::npos) break;
    from = slash + 1;
  }
  return codes;
}

// What a case that stopped at a defect of a set-up call (attach,
// waitforattach, mountdevice, mount: kubelet retries it and goes no
// further) never judged: its own rules that no finding names. "" when it
// stopped elsewhere (teardown comes after its checks), or a finding names
// one of its rules (it got to its own check, or its own check stopped it),
// or the case is one whose hostile input breaking the set-up is the
// defect it looks for ([robustness]).
std::string NotChecked(const Case& c, CaseContext& ctx, const std::string& stopped_at) {
  if (std::count(c.tags.begin(), c.tags.end(), "robustness")) return "";
  static const std::set<std::string> set_up_verbs = {"attach", "waitforattach", "mountdevice",
                                                     "mount", "getvolumename"};
  const auto findings = ctx.findings();
  std::optional<std::size_t> call;
  for (const auto& f : findings) {
    if (f.rule == stopped_at) call = f.call;
  }
  const auto calls = ctx.transcript().Calls();
  if (!call || *call >= calls.size() || !set_up_verbs.count(calls[*call].verb)) return "";
  std::set<std::string> seen;
  for (const auto& f : findings) {
    for (const auto& code : FCodes(f.rule)) seen.insert(code);
  }
  std::vector<std::string> missed;
  for (const auto& mode : c.failure_modes) {
    if (seen.count(mode)) return "";
    missed.push_back(mode);
  }
  if (missed.empty()) return "";
  return Join(missed, ", ") + ": the case stopped at " +
         stopped_at.substr(0, stopped_at.find(':')) + " in " + calls[*call].verb +
         ", before its own checks; kubelet retries that call and gets no further either";
}

// Runs the case in its set-up context and judges it: its findings, kubelet's
// teardown of what it set up, what it left on its nodes, its warnings.
void RunAndJudge(const Case& c, CaseContext& ctx, Fixture& fixture,
                 const std::vector<NodeSnapshot>& node_before, CaseResult& r) {
  std::string stopped;  // a harness exception
  bool skipped = false;
  try {
    c.run(ctx);
  } catch (const CaseSkip& e) {
    skipped = true;
    r.reason = e.what();
  } catch (const CaseFailure& e) {
    // Recorded by Fail; a CaseFailure thrown directly is added here.
    if (!e.recorded) ctx.Record(e.rule, e.what());
    r.not_checked = NotChecked(c, ctx, e.rule);
  } catch (const std::exception& e) {
    stopped = e.what();
  }
  auto teardown = ctx.tracker().UnwindAll();
  // The case's findings, per-call ones included, in the order seen.
  for (const auto& f : ctx.findings()) AddFinding(r, f);
  if (!stopped.empty()) SetError(r, "the case stopped", stopped);
  std::vector<std::string> unexplained;
  for (const auto& t : teardown) {
    if (!ctx.Restates(t)) unexplained.push_back(t);
  }
  if (!unexplained.empty())
    SetFail(r, "teardown-succeeds: kubelet's teardown of what the case set up succeeds",
            "teardown: " + Join(unexplained, "; "));
  // A SKIP after a rule was broken stays a FAIL.
  if (skipped && r.findings.empty()) r.grade = Grade::kSkip;
  std::set<pid_t> fixture_pids;
  for (pid_t p : fixture.Pids()) fixture_pids.insert(p);
  std::vector<std::string> leaks;
  for (std::size_t i = 0; i < node_before.size(); ++i) {
    auto l = CompareNode(ctx.node(i), node_before[i], TakeNodeSnapshot(ctx.node(i)), fixture_pids);
    leaks.insert(leaks.end(), l.begin(), l.end());
  }
  if (!leaks.empty()) SetFail(r, "F26 no-leaks: a case leaves nothing behind", Join(leaks, "; "));
  if (r.grade == Grade::kPass && !ctx.warnings().empty()) {
    r.grade = Grade::kWarn;
    r.reason = Join(ctx.warnings(), "; ");
    r.rule = "warn: kubelet tolerates it, but it is wrong";
  }
  r.warnings = ctx.warnings();
  r.transcript = ctx.transcript().ToJson();
  r.driver_time = ctx.driver_time();
}

// What the case left on the host outside its nodes: a FAIL, and reclaimed
// unless --keep.
void JudgeHostLeaks(const HostSnapshot& run_start, const CaseMarks& marks, bool keep,
                    CaseResult& r) {
  const std::string run_dir = std::filesystem::path(marks.case_dir).parent_path().string();
  auto host_leaks = FindHostLeaks(run_start, TakeHostSnapshot(run_dir), marks);
  if (!host_leaks.empty()) {
    std::vector<std::string> lines;
    if (keep) {
      for (const auto& l : host_leaks) lines.push_back(l.what + " (kept: --keep)");
    } else {
      lines = ReclaimHostLeaks(host_leaks);
    }
    SetFail(r, "F26 no-leaks: a case leaves nothing behind", Join(lines, "; "));
  }
}

// Every name a run's cases make starts with it: "r<pid>c" (then the case,
// "r1234c5"), so what the run made is told from another run's.
std::string RunPrefix() { return "r" + std::to_string(::getpid() % 100000) + "c"; }

// What the run's driver calls left in the host's scratch places that no
// case's marks claim: "" when nothing.
std::string ScratchNote(const DriverProfile& profile, const RunSummary& summary,
                        const HostSnapshot& run_start) {
  std::vector<std::string> marks = {"-" + RunPrefix(), summary.run_dir};
  for (const auto& [key, value] : profile.secrets) {
    if (value.size() >= 6) marks.push_back(value);  // shorter ones match anything
  }
  const auto left = ScratchEntriesAdded(run_start, TakeHostSnapshot(summary.run_dir), marks);
  if (left.empty()) return "";
  constexpr std::size_t kShown = 10;
  std::vector<std::string> shown(left.begin(), left.begin() + std::min(left.size(), kShown));
  if (left.size() > kShown)
    shown.push_back("and " + std::to_string(left.size() - kShown) + " more");
  return "left in the host's scratch places by the run's driver calls (they hold the run's "
         "volume names or the profile's secrets) and named for no case: " +
         Join(shown, ", ");
}

// Whys quote drivers' replies and leftover processes' command lines, which
// may carry a secret (a Failure naming the user, a mount helper's
// password=): none leaves the case unredacted.
void RedactWhys(const sim::Redactor& redactor, CaseResult& r) {
  r.reason = redactor.Apply(std::move(r.reason));
  for (auto& f : r.findings) f.why = redactor.Apply(std::move(f.why));
  for (auto& w : r.warnings) w = redactor.Apply(std::move(w));
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
  sim::Redactor redactor;  // the case's secrets, kept past its context
  CaseMarks marks{case_dir, unique, {}, {}};
  for (const auto& [key, value] : profile.volume_options) {
    if (!value.empty() && value.front() == '/') marks.backend_paths.push_back(value);
  }
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
    if (ctx && r.findings.empty()) RunAndJudge(c, *ctx, *fixture, node_before, r);
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
    if (ctx) {
      redactor = ctx->redactor();
      marks.secrets = ctx->OwnSecrets();
    }
  }  // nodes end here: their namespaces and holders are gone
  JudgeHostLeaks(run_start, marks, settings.keep, r);
  RedactWhys(redactor, r);
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

// What every worker of one run shares.
struct RunScope {
  const DriverProfile& profile;
  const std::vector<const Case*>& cases;
  const RunSettings& settings;
  const std::string& run_dir;
  const HostSnapshot& run_start;  // workers inherit it
  const HangLog& hangs;
};

// A started worker: the attempt it runs and what the watchdog reads.
struct Worker {
  Attempt attempt;
  std::chrono::steady_clock::time_point start;
  std::chrono::system_clock::time_point started_at;  // to compare with its progress mark
  int pidfd = -1;                                    // readable when the worker ends
  std::string unique;
};

CaseResult HarnessError(const Case& c, const std::string& what, const std::string& why) {
  CaseResult r;
  r.name = c.name;
  r.tags = c.tags;
  SetError(r, what, why);
  return r;
}

// Forks the worker of `attempt`: its pid, or -1 when fork failed (errno).
pid_t ForkWorker(const RunScope& run, const Attempt& attempt, const std::string& unique) {
  std::cout.flush();  // the worker must not print what the parent buffered
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid == 0)
    RunWorker(run.profile, *run.cases[attempt.index], attempt, unique, run.run_dir, run.settings,
              run.run_start, run.hangs);
  return pid;
}

// Starts attempts while a slot is free (a skipped case is reported without
// a worker); on SIGINT/SIGTERM none, the run marked interrupted.
void StartWorkers(const RunScope& run, CaseScheduler& scheduler, std::map<pid_t, Worker>& running,
                  RunSummary& summary) {
  while (true) {
    if (run.settings.interrupted && run.settings.interrupted->load()) {
      if (scheduler.Pending()) summary.interrupted = true;
      return;
    }
    const auto next = scheduler.Next();
    if (!next) return;
    const Case& c = *run.cases[next->index];
    if (next->attempt == 0) {
      if (run.settings.on_start) run.settings.on_start(c, next->index, run.cases.size());
      if (auto skipped = Skipped(run.profile, c)) {
        scheduler.Finish(*next, std::move(*skipped));
        continue;
      }
    }
    // Every case of the run shares the run's pid; the index (and the
    // attempt) tell them apart.
    const std::string unique = RunPrefix() + next->Suffix();
    const pid_t pid = ForkWorker(run, *next, unique);
    if (pid < 0) {
      scheduler.Finish(*next, HarnessError(c, "starting the case",
                                           std::string("fork: ") + std::strerror(errno)));
      continue;
    }
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) {
      const int err = errno;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw std::system_error(err, std::system_category(), "pidfd_open of a case worker");
    }
    running[pid] = {*next, std::chrono::steady_clock::now(), std::chrono::system_clock::now(),
                    pidfd, unique};
  }
}

// Waits up to a second for a worker to end, then collects every one that
// did and stops every one whose harness stalled.
std::vector<std::pair<pid_t, CaseResult>> CollectEnded(const RunScope& run,
                                                       const std::map<pid_t, Worker>& running,
                                                       std::chrono::milliseconds stall_limit) {
  std::vector<pollfd> ends;
  for (const auto& [pid, worker] : running) ends.push_back({worker.pidfd, POLLIN, 0});
  if (::poll(ends.data(), ends.size(), 1000) < 0 && errno != EINTR)
    throw std::system_error(errno, std::system_category(), "poll the case workers");
  std::vector<std::pair<pid_t, CaseResult>> ended;
  for (const auto& [pid, worker] : running) {
    const Case& c = *run.cases[worker.attempt.index];
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ended.emplace_back(pid, CollectWorker(c, worker.attempt, run.run_dir, status));
      continue;
    }
    const std::string stalled_for =
        StallOf(ReadProgress(ProgressFile(run.run_dir, worker.attempt)), worker.started_at,
                std::chrono::system_clock::now(), stall_limit);
    if (stalled_for.empty()) continue;
    ended.emplace_back(pid, StopStalledWorker(c, pid, run.run_dir + "/" + worker.attempt.Suffix(),
                                              worker.unique, stalled_for, run.settings));
  }
  return ended;
}

}  // namespace

RunSummary RunCases(const DriverProfile& profile, const std::vector<const Case*>& cases,
                    const RunSettings& settings) {
  RunSummary summary;
  summary.run_dir = settings.run_root + "/flexconform-" + std::to_string(::getpid());
  std::filesystem::create_directories(summary.run_dir);
  std::ofstream(summary.run_dir + "/" + kMarker) << ::getpid() << "\n"
                                                 << (settings.keep ? kKeptMark : "") << "\n";
  const HostSnapshot run_start = TakeHostSnapshot(summary.run_dir);
  const HangLog hangs(summary.run_dir + "/hangs");
  const RunScope run{profile, cases, settings, summary.run_dir, run_start, hangs};
  std::vector<std::vector<std::string>> tags;
  for (const auto* c : cases) tags.push_back(c->tags);
  CaseScheduler scheduler(std::move(tags),
                          {static_cast<std::size_t>(std::max(1, settings.jobs)), settings.retries,
                           settings.fail_fast, settings.flaky_allowed, profile.max_jobs == 0},
                          settings.on_result);
  const auto stall_limit =
      settings.stall_limit.count() > 0 ? settings.stall_limit : StallLimit(profile);
  std::map<pid_t, Worker> running;
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    StartWorkers(run, scheduler, running, summary);
    if (running.empty()) break;
    for (auto& [pid, result] : CollectEnded(run, running, stall_limit)) {
      const Worker worker = running.at(pid);
      running.erase(pid);
      ::close(worker.pidfd);
      std::error_code ec;
      std::filesystem::remove(ProgressFile(summary.run_dir, worker.attempt), ec);
      result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - worker.start);
      scheduler.Finish(worker.attempt, std::move(result));
    }
  }
  summary.results = scheduler.TakeResults();
  for (const auto& r : summary.results) summary.driver_time += r.driver_time;
  summary.wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (!scheduler.FailedFirst().empty() && summary.results.size() < cases.size())
    summary.notes.push_back("--fail-fast: stopped after " + scheduler.FailedFirst() + " failed; " +
                            std::to_string(cases.size() - summary.results.size()) + " of " +
                            std::to_string(cases.size()) + " cases not run");
  for (auto& note : HangNotes(hangs, profile)) summary.notes.push_back(std::move(note));
  if (auto note = ScratchNote(profile, summary, run_start); !note.empty())
    summary.notes.push_back(std::move(note));
  if (!settings.keep) {
    std::error_code ec;
    std::filesystem::remove_all(summary.run_dir, ec);
  }
  return summary;
}

}  // namespace flexkit::conform
