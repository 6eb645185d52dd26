#include "tests/bench/exec_timer.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

extern char** environ;

namespace flexkit::bench {

double TimeRun(const std::vector<std::string>& argv_in, std::string* output) {
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
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
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

double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::vector<double> InterleavedMedians(const std::vector<std::vector<std::string>>& commands,
                                       int runs) {
  std::vector<std::vector<double>> times(commands.size());
  std::string out;
  for (int i = -1; i < runs; ++i) {
    for (size_t c = 0; c < commands.size(); ++c) {
      const double us = TimeRun(commands[c], &out);
      if (us < 0) {
        std::fprintf(stderr, "bench: %s failed: %s\n", commands[c][0].c_str(), out.c_str());
        return {};
      }
      if (i >= 0) times[c].push_back(us);  // run -1 warms the page cache
    }
  }
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(Median(t));
  return medians;
}

}  // namespace flexkit::bench
