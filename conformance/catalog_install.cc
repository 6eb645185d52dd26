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
// A driver may keep helpers beside its executable (a sourced common.sh, an
// init helper; sim::DriverHelpers says which files): they are installed
// first, each the same safe way, and the executable last; the transcript
// names them.
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
#include "platform/read_file.h"
#include "simulator/cluster.h"
#include "simulator/plugin_name.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;

// `to` gets the driver: its helpers (sim::DriverHelpers), then the executable.
void CopyDriver(const DriverProfile& p, const fs::path& to, const std::string& exe) {
  fs::create_directories(to);
  for (const auto& helper : sim::DriverHelpers(p.driver)) {
    fs::copy_file(helper, to / helper.filename(), fs::copy_options::overwrite_existing);
  }
  fs::copy_file(p.driver, to / exe, fs::copy_options::overwrite_existing);
}

// Two copies of the driver, in folders named like the plugin folder (an
// installer may derive its destination from its own location), the second
// one byte longer.
std::vector<fs::path> DistinctCopies(CaseContext& c, const std::string& folder,
                                     const std::string& exe) {
  std::vector<fs::path> copies;
  for (const char* variant : {"install-a", "install-b"}) {
    const fs::path dir = fs::path(c.case_dir()) / variant / folder;
    CopyDriver(c.profile(), dir, exe);
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
  const auto target = dir / exe;
  CopyDriver(c.profile(), dir, exe);
  std::vector<std::string> helpers;
  for (const auto& h : sim::DriverHelpers(c.profile().driver)) helpers.push_back(h.string());
  c.transcript().AddEvent("driver installed", {{"folder", dir.string()}, {"helpers", helpers}});
  c.tracker().Push("remove " + dir.string(), [dir] { fs::remove_all(dir); });

  constexpr int kInstalls = 6;
  std::vector<std::vector<std::string>> installs;
  std::string expected_final;
  const std::string log = c.case_dir() + "/installer.log";
  if (c.profile().install.empty()) {
    // Paths are arguments, never spliced into the script. Each helper is
    // copied to a dot-name (the prober ignores it) and renamed into place,
    // then the executable the same way.
    std::vector<std::string> argv = {
        "/bin/sh",
        "-c",
        "exe=$1 name=$2 dest=$3; shift 3\n"
        "for i in 1 2 3 4 5 6; do\n"
        "  for p in \"$@\"; do e=${p##*/}\n"
        "    cp -- \"$p\" \"$dest/.$e.installing\" && mv -f -- \"$dest/.$e.installing\" "
        "\"$dest/$e\" || exit 1\n"
        "  done\n"
        "  cp -- \"$exe\" \"$dest/.$name.installing\" && "
        "mv -f -- \"$dest/.$name.installing\" \"$dest/$name\" || exit 1\n"
        "done",
        "installer",
        c.profile().driver,
        exe,
        dir.string()};
    for (const auto& helper : sim::DriverHelpers(c.profile().driver)) {
      argv.push_back(helper.string());
    }
    installs.push_back(argv);
    expected_final = platform::ReadWholeFile(c.profile().driver);
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
    expected_final = platform::ReadWholeFile(copies[(kInstalls - 1) % 2]);
  }

  auto installer = std::async(std::launch::async, [&]() -> std::string {
    for (const auto& argv : installs) {
      if (int rc = RunToCompletion(argv, log); rc != 0) {
        return argv.front() + " exited with " + std::to_string(rc) + " (output in " + log + ")";
      }
    }
    return "";
  });
  const std::string rule = "F27 atomic-install: init answers while the driver is being installed";
  try {
    for (int i = 0;
         i < 5 || installer.wait_for(std::chrono::seconds(0)) != std::future_status::ready; ++i)
      c.Require(c.InitCopy(n, target.string()), "init", rule);
  } catch (...) {
    installer.wait();
    throw;
  }
  if (const std::string error = installer.get(); !error.empty()) {
    if (c.profile().install.empty())
      throw std::runtime_error("the suite's installer failed: " + error);
    c.Fail(rule, "the driver's installer failed: " + error);
  }
  if (!fs::is_regular_file(target) || platform::ReadWholeFile(target) != expected_final) {
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
