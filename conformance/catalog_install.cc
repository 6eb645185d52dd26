// [install]: a hot install while kubelet probes (F27). kubelet re-runs init
// on every change in the driver's folder, so init runs in a loop on the
// watched name for as long as installs go on, and every init must answer.
//
// A driver whose profile names its own installer (`install:`) is installed
// by it, alternately from two copies that differ by one byte so that every
// install really writes: an installer that writes in place lets init run a
// half-written file (rook#2064) and fails here. Without one, the suite
// installs the safe way (a dot-file, which the prober ignores, then a
// rename), which checks only that init answers while its file is replaced.
//
// The installer is always another process, as on a node. Copying from a
// thread of this process would let a driver call forked meanwhile inherit
// the open write descriptor, and the kernel then refuses to exec the
// renamed file (ETXTBSY): a harness artefact, not a driver fault.
#include <filesystem>
#include <fstream>
#include <future>

#include "conformance/background_process.h"
#include "conformance/catalog.h"
#include "simulator/plugin_name.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Two copies of the driver, in folders named like the plugin folder (an
// installer may derive its destination from its own location), the second
// one byte longer.
std::vector<fs::path> DistinctCopies(CaseContext& c, const std::string& folder,
                                     const std::string& exe) {
  std::vector<fs::path> copies;
  for (const char* variant : {"install-a", "install-b"}) {
    const fs::path dir = fs::path(c.case_dir()) / variant / folder;
    fs::create_directories(dir);
    fs::copy_file(c.profile().driver, dir / exe, fs::copy_options::overwrite_existing);
    copies.push_back(dir / exe);
  }
  std::ofstream(copies[1], std::ios::binary | std::ios::app) << '\n';
  return copies;
}

void HotInstall(CaseContext& c) {
  auto& n = c.node();
  const std::string name = c.profile().driver_name;
  const std::string folder = sim::EscapeDriverName(name);
  const std::string exe = sim::ExecutableName(name);
  const fs::path dir = fs::path(n.plugin_dir()) / folder;
  fs::create_directories(dir);
  const auto target = dir / exe;
  fs::copy_file(c.profile().driver, target, fs::copy_options::overwrite_existing);
  c.tracker().Push("remove " + dir.string(), [dir] { fs::remove_all(dir); });

  constexpr int kInstalls = 6;
  std::vector<std::vector<std::string>> installs;
  std::string expected_final;
  const std::string log = c.case_dir() + "/installer.log";
  if (c.profile().install.empty()) {
    // Paths are arguments, never spliced into the script.
    installs.push_back({"/bin/sh", "-c",
                        "for i in 1 2 3 4 5 6; do cp -- \"$1\" \"$2\" && mv -f -- \"$2\" \"$3\" "
                        "|| exit 1; done",
                        "installer", c.profile().driver,
                        (dir / ("." + exe + ".installing")).string(), target.string()});
    expected_final = ReadAll(c.profile().driver);
  } else {
    const auto copies = DistinctCopies(c, folder, exe);
    for (int i = 0; i < kInstalls; ++i) {
      std::vector<std::string> argv;
      for (const auto& arg : c.profile().install) {
        argv.push_back(Substitute(Substitute(arg, "{{driver}}", copies[i % 2].string()),
                                  "{{plugin_dir}}", n.plugin_dir()));
      }
      installs.push_back(argv);
    }
    expected_final = ReadAll(copies[(kInstalls - 1) % 2]);
  }

  auto installer = std::async(std::launch::async, [&]() -> std::string {
    for (const auto& argv : installs) {
      if (int rc = RunToCompletion(argv, log); rc != 0) {
        return argv.front() + " exited with " + std::to_string(rc) + " (output in " + log + ")";
      }
    }
    return "";
  });
  const std::string rule = "F27 (protocol §1: init answers while the driver is being installed)";
  try {
    for (int i = 0;
         i < 5 || installer.wait_for(std::chrono::seconds(0)) != std::future_status::ready; ++i)
      c.Require(n, c.argv().Init(), rule, "kubelet", target.string());
  } catch (...) {
    installer.wait();
    throw;
  }
  if (const std::string error = installer.get(); !error.empty()) {
    if (c.profile().install.empty())
      throw std::runtime_error("the suite's installer failed: " + error);
    c.Fail(rule, "the driver's installer failed: " + error);
  }
  if (ReadAll(target) != expected_final) {
    c.Fail(rule, "after the last install, " + target.string() +
                     " does not hold the installed executable");
  }
  TearDownAll(c);
}

}  // namespace

void AddInstallCases(std::vector<Case>& cases) {
  cases.push_back({"install/hot-install-during-probe", {"install"}, {"F27"}, Always, HotInstall});
}

}  // namespace flexkit::conform
