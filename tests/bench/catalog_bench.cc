// What a release gate pays for flexconform: the whole catalog against
// flexkit-tmpfs, against the bundled driver on the fake Convoy/EBS, and against
// a driver whose every call but init hangs, each at -j (the CPUs). Prints
// wall time, the CPU time of flexconform and everything it ran, and their
// ratio (how much of the wall the machine was busy), against the targets
// of this 2-core machine. The baseline is the hanging driver's floor:
// 2 x the per-call deadline x the cases it runs / N.
//
//   catalog_bench FLEXCONFORM TMPFS_DRIVER
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Measured {
  double wall_s = 0;
  double cpu_s = 0;
  int exit_code = -1;
};

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; }

// Runs argv with its output sent to /dev/null; the CPU time is of it and
// every process it waited for.
Measured Run(const std::vector<std::string>& argv) {
  rusage before{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // else the child's freopen prints our buffered lines again
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Measured m;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  ::getrusage(RUSAGE_CHILDREN, &after);
  m.cpu_s = Seconds(after.ru_utime) + Seconds(after.ru_stime) - Seconds(before.ru_utime) -
            Seconds(before.ru_stime);
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return m;
}

bool Report(const char* name, const Measured& m, double target_s, int expected_exit) {
  const bool ok = m.exit_code == expected_exit && m.wall_s <= target_s;
  std::printf("%-34s wall %7.2f s  cpu %7.2f s  cpu/wall %4.2f  (target <= %.2f s, exit %d): %s\n",
              name, m.wall_s, m.cpu_s, m.wall_s > 0 ? m.cpu_s / m.wall_s : 0.0, target_s,
              m.exit_code, ok ? "ok" : "OVER TARGET");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FLEXCONFORM TMPFS_DRIVER\n", argv[0]);
    return 2;
  }
  const std::string flexconform = argv[1], tmpfs = argv[2];
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char dir_template[] = "/tmp/flexconform-bench.XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string hang_dir = dir + "/bench~hang";
  std::system(("mkdir -p " + hang_dir).c_str());
  const std::string hang = hang_dir + "/hang";
  std::ofstream(hang) << "#!/bin/sh\n"
                         "[ \"$1\" = init ] && printf '{\"status\":\"Success\",\"capabilities\":"
                         "{\"attach\":false}}\\n' && exit 0\n"
                         "exec sleep 600\n";
  ::chmod(hang.c_str(), 0755);

  bool ok = true;
  // flexkit-tmpfs first: the bundled run removes thousands of files, and
  // on a no-journal ext4 (this VM's /) every mkdir for the next 30 s scans
  // past the recently deleted inodes, which made the tmpfs run after it
  // 0.9 s against 0.6 s.
  ok &= Report("flexkit-tmpfs, full catalog",
               Run({flexconform, "--driver", tmpfs, "--run-root", dir}), 0.6, 0);
  ok &=
      Report("bundled (convoy-fake), full catalog", Run({flexconform, "--run-root", dir}), 15.0, 0);
  // Mount-only and no fixture: the cases that reach a hanging call.
  const double deadline_s = 2;
  const Measured hung = Run({flexconform, "--driver", hang, "--timeout", "2s", "--run-root", dir,
                             "--json", dir + "/hang.json"});
  int ran = 0;  // cases that reached a driver call past init
  {
    std::ifstream in(dir + "/hang.json");
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (!doc.is_discarded())
      for (const auto& c : doc["cases"]) ran += c["verdict"] != "SKIP" && c["verdict"] != "PASS";
  }
  ok &= Report("every call hangs (--timeout 2s)", hung, 2 * deadline_s * ran / cpus, 1);
  std::printf("(hanging driver: %d cases reached a hanging call; %d CPUs)\n", ran, cpus);
  std::system(("rm -rf " + dir).c_str());
  return ok ? 0 : 1;
}
