// What the harness costs per driver call, against a baseline measured in the
// same run: a raw posix_spawn + read to EOF + waitpid of the same trivial
// driver. And sustained calls per second of `init` (flexkit-tmpfs when built,
// else the dummy shell driver), on every core.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "simulator/boost_process_runner.h"
#include "simulator/driver_invoker.h"
#include "simulator/judge.h"

extern char** environ;

namespace {

using namespace flexkit::sim;

// A driver as cheap as a process can be, so the harness's share shows.
std::string TrivialDriver() {
  static const std::string path = [] {
    std::string p = std::filesystem::temp_directory_path().string() + "/flexsim-bench~true";
    std::filesystem::create_directories(p);
    p += "/true";
    std::filesystem::copy_file("/bin/true", p, std::filesystem::copy_options::overwrite_existing);
    return p;
  }();
  return path;
}

std::string InitDriver() {
  const char* build = std::getenv("FLEXKIT_BUILD_DIR");
  if (build != nullptr) {
    std::string tmpfs = std::string(build) + "/driver/samples/tmpfs/flexkit-tmpfs";
    if (std::filesystem::exists(tmpfs)) return tmpfs;
  }
  return std::string(FLEXKIT_SOURCE_DIR) + "/tests/data/drivers/k8s~dummy/dummy";
}

void RawSpawn(const std::string& exe) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("init"), nullptr};
  pid_t pid = 0;
  posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  char buf[4096];
  while (read(fds[0], buf, sizeof buf) > 0) {
  }
  close(fds[0]);
  waitpid(pid, nullptr, 0);
}

void BM_RawPosixSpawn(benchmark::State& state) {
  const std::string exe = TrivialDriver();
  for (auto _ : state) RawSpawn(exe);
}
BENCHMARK(BM_RawPosixSpawn)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The runner plus judging: what every simulated call costs in the caller's
// namespace.
void BM_HarnessCall(benchmark::State& state) {
  BoostProcessRunner runner;
  ProcessSpec spec;
  spec.executable = TrivialDriver();
  spec.args = {"init"};
  for (auto _ : state) {
    ProcessResult r = runner.Run(spec);
    benchmark::DoNotOptimize(Judge("init", r.exit, r.combined));
  }
}
BENCHMARK(BM_HarnessCall)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The harness's overhead over a raw spawn: both kinds of call alternated in
// one loop, so that load from other processes hits them alike; medians as
// counters.
void BM_OverheadOverRawSpawn(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  BoostProcessRunner runner;
  ProcessSpec spec;
  spec.executable = TrivialDriver();
  spec.args = {"init"};
  std::vector<double> raw, harness;
  for (auto _ : state) {
    auto t0 = Clock::now();
    RawSpawn(spec.executable);
    auto t1 = Clock::now();
    ProcessResult r = runner.Run(spec);
    benchmark::DoNotOptimize(Judge("init", r.exit, r.combined));
    auto t2 = Clock::now();
    raw.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    harness.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  state.counters["raw_median_us"] = quantile(raw, 0.5);
  state.counters["harness_median_us"] = quantile(harness, 0.5);
  state.counters["overhead_median_us"] = quantile(harness, 0.5) - quantile(raw, 0.5);
  state.counters["raw_p90_us"] = quantile(raw, 0.9);
  state.counters["harness_p90_us"] = quantile(harness, 0.9);
}
BENCHMARK(BM_OverheadOverRawSpawn)->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(400);

// A full node call: exec inside the node's mount namespace, mount tables
// read before and after, transcript record.
void BM_NodeCall(benchmark::State& state) {
  if (geteuid() != 0) {
    state.SkipWithError("needs root: node mount namespace");
    return;
  }
  std::string run = std::filesystem::temp_directory_path().string() + "/flexsim-bench-run";
  {
    Node node("bench", run);
    BoostProcessRunner runner;
    Transcript transcript;
    DriverInvoker invoker(runner, transcript);
    for (auto _ : state) {
      benchmark::DoNotOptimize(
          invoker.Call(node, "kubelet", TrivialDriver(), {"init"}, Redactor()));
    }
  }
  std::filesystem::remove_all(run);
}
BENCHMARK(BM_NodeCall)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Sustained `init` calls per second, one caller per core.
void BM_InitCallsPerSecond(benchmark::State& state) {
  BoostProcessRunner runner;
  ProcessSpec spec;
  spec.executable = InitDriver();
  spec.args = {"init"};
  for (auto _ : state) {
    ProcessResult r = runner.Run(spec);
    if (Judge("init", r.exit, r.combined).outcome != Outcome::kSuccess) {
      state.SkipWithError("init did not succeed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::filesystem::path(spec.executable).filename().string());
}
BENCHMARK(BM_InitCallsPerSecond)->Threads(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
