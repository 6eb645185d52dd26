// Start-up cost of a driver built on the SDK, the way kubelet pays it:
// `DRIVER init` against /bin/true and a shell driver printing the same reply
// (the baseline a C++ driver must beat), run alternately. Prints the medians
// and fails when DRIVER init is over MAX_RATIO (default 1.10) x /bin/true.
//
//   exec_init_bench DRIVER [RUNS] [MAX_RATIO]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/bench/exec_timer.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DRIVER [RUNS] [MAX_RATIO]\n", argv[0]);
    return 2;
  }
  const std::string driver = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 300;
  const double max_ratio = argc > 3 ? std::atof(argv[3]) : 1.10;
  const std::vector<std::vector<std::string>> commands = {
      {driver, "init"},
      {"/bin/true"},
      {"/bin/sh", "-c",
       "printf '{\"status\":\"Success\",\"capabilities\":{\"attach\":false}}\\n'"}};
  const auto m = flexkit::bench::InterleavedMedians(commands, runs);
  if (m.empty()) return 1;
  const std::string name = driver.substr(driver.rfind('/') + 1) + " init";
  std::printf("%-28s median %8.1f us over %d runs (%.2fx /bin/true)\n", name.c_str(), m[0], runs,
              m[0] / m[1]);
  std::printf("%-28s median %8.1f us\n", "/bin/true", m[1]);
  std::printf("%-28s median %8.1f us (%.2fx /bin/true)\n", "shell driver init", m[2], m[2] / m[1]);
  const double ratio = m[0] / m[1];
  std::printf("%s / /bin/true = %.2f (target <= %.2f): %s\n", name.c_str(), ratio, max_ratio,
              ratio <= max_ratio ? "ok" : "OVER TARGET");
  return ratio <= max_ratio ? 0 : 1;
}
