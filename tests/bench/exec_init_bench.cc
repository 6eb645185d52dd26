// Start-up cost of a driver built on the SDK, the way kubelet pays it: exec
// `flexkit-tmpfs init`, read its combined output through a pipe, wait. Runs
// the driver and the baselines alternately so machine noise hits all alike,
// and reports medians and the ratio to /bin/true (target: <= 1.5x).
//
//   exec_init_bench DRIVER [RUNS] [MAX_RATIO]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Runs argv with stdout+stderr on one pipe (kubelet's CombinedOutput) and
// returns the wall time in microseconds, or -1 if the run failed.
double RunOnce(const std::vector<std::string>& argv_in, std::string* output) {
  std::vector<char*> argv;
  for (const auto& a : argv_in) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return -1;
  }
  output->clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double, std::micro>(end - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DRIVER [RUNS] [MAX_RATIO]\n", argv[0]);
    return 2;
  }
  const std::string driver = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 300;
  const double max_ratio = argc > 3 ? std::atof(argv[3]) : 1.5;

  struct Subject {
    const char* name;
    std::vector<std::string> argv;
    std::vector<double> times;
  };
  std::vector<Subject> subjects = {
      {"flexkit-tmpfs init", {driver, "init"}, {}},
      {"/bin/true", {"/bin/true"}, {}},
      {"shell driver init",
       {"/bin/sh", "-c",
        "printf '{\"status\":\"Success\",\"capabilities\":{\"attach\":false}}\\n'"},
       {}},
  };
  std::string out;
  for (auto& s : subjects) RunOnce(s.argv, &out);  // warm the page cache
  for (int i = 0; i < runs; ++i) {
    for (auto& s : subjects) {
      double us = RunOnce(s.argv, &out);
      if (us < 0) {
        std::fprintf(stderr, "exec_init_bench: %s failed (output: %s)\n", s.name, out.c_str());
        return 1;
      }
      s.times.push_back(us);
    }
  }
  const double base = Median(subjects[1].times);
  for (const auto& s : subjects) {
    std::printf("%-20s median %8.1f us over %d runs  (%.2fx /bin/true)\n", s.name, Median(s.times),
                runs, Median(s.times) / base);
  }
  const double ratio = Median(subjects[0].times) / base;
  std::printf("flexkit-tmpfs init / /bin/true = %.2f (target <= %.2f): %s\n", ratio, max_ratio,
              ratio <= max_ratio ? "ok" : "OVER TARGET");
  return ratio <= max_ratio ? 0 : 1;
}
