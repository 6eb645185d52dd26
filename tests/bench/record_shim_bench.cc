// What flexsim-record-shim adds to every driver call in a recorded cluster:
// `DRIVER init` run directly and through the shim (installed beside it the
// way `flexsim record install` does), interleaved, with `/bin/true` as the
// machine's baseline. Prints the medians and the added latency, and fails
// when the shim adds more than MAX_ADDED_US microseconds.
//
//   record_shim_bench DRIVER SHIM [RUNS] [MAX_ADDED_US]
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/bench/exec_timer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DRIVER SHIM [RUNS] [MAX_ADDED_US]\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 300;
  const double max_added = argc > 4 ? std::atof(argv[4]) : 1000;
  char tmpl[] = "/tmp/record-shim-bench.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 2;
  const std::string dir = std::string(tmpl) + "/bench~drv";
  fs::create_directories(dir);
  fs::copy_file(argv[1], dir + "/.drv.real");
  fs::copy_file(argv[2], dir + "/drv");
  // The shim's log, outside the plugin dir as a real install puts it.
  {
    std::FILE* f = std::fopen((dir + "/.drv.record").c_str(), "w");
    if (f == nullptr) return 2;
    std::fprintf(f, "%s/calls.jsonl\n", tmpl);
    std::fclose(f);
  }
  const auto m = flexkit::bench::InterleavedMedians(
      {{dir + "/.drv.real", "init"}, {dir + "/drv", "init"}, {"/bin/true"}}, runs);
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  if (m.empty()) return 1;
  const double added = m[1] - m[0];
  std::printf("driver init direct          median %8.1f us over %d runs (%.2fx /bin/true)\n", m[0],
              runs, m[0] / m[2]);
  std::printf("driver init through shim    median %8.1f us (%.2fx /bin/true)\n", m[1], m[1] / m[2]);
  std::printf("/bin/true                   median %8.1f us\n", m[2]);
  std::printf("record shim adds %.1f us per call (target <= %.0f us): %s\n", added, max_added,
              added <= max_added ? "ok" : "OVER TARGET");
  return added <= max_added ? 0 : 1;
}
