// [install]: a hot install while kubelet probes (F27). kubelet re-runs init
// on every change in the driver's folder; the suite installs the driver the
// safe way (a dot-file, then rename) while init runs in a loop on the
// watched name, and every init must answer. Installing in place is what
// rook#2064 did; the suite does not do it, because a partial binary is the
// installer's fault, not the driver's.
//
// The installer is another process, as it is on a node (a DaemonSet's cp and
// mv). Copying from a thread of this process would let a driver call forked
// meanwhile inherit the open write descriptor, and the kernel then refuses to
// exec the renamed file (ETXTBSY): a harness artefact, not a driver fault.
#include <filesystem>
#include <future>

#include "conformance/background_process.h"
#include "conformance/catalog.h"
#include "simulator/plugin_name.h"

namespace flexkit::conform {
namespace {

void HotInstall(CaseContext& c) {
  auto& n = c.node();
  const std::string name = c.profile().driver_name;
  std::string folder = name;
  for (auto& ch : folder) {
    if (ch == '/') ch = '~';
  }
  const std::filesystem::path dir = std::filesystem::path(n.plugin_dir()) / folder;
  std::filesystem::create_directories(dir);
  const auto target = dir / sim::ExecutableName(name);
  const auto staging = dir / ("." + sim::ExecutableName(name) + ".installing");
  std::filesystem::copy_file(c.profile().driver, target,
                             std::filesystem::copy_options::overwrite_existing);
  c.tracker().Push("remove " + dir.string(), [dir] { std::filesystem::remove_all(dir); });
  // Five installs, each a full copy to the dot-file and a rename over the
  // watched name; paths are arguments, never spliced into the script.
  const std::vector<std::string> installer_argv = {
      "/bin/sh",
      "-c",
      "for i in 1 2 3 4 5; do cp -- \"$1\" \"$2\" && mv -f -- \"$2\" \"$3\" || exit 1; done",
      "installer",
      c.profile().driver,
      staging.string(),
      target.string()};
  const std::string installer_log = c.case_dir() + "/installer.log";
  auto installer = std::async(std::launch::async, [&] {
    return RunToCompletion(installer_argv, installer_log);
  });
  try {
    for (int i = 0; i < 5; ++i)
      c.Require(n, c.argv().Init(), "F27 (protocol §1: init answers during an install)", "kubelet",
                target.string());
  } catch (...) {
    installer.wait();
    throw;
  }
  if (int rc = installer.get(); rc != 0) {
    throw std::runtime_error("the installer (cp, then mv over " + target.string() +
                             ") failed with " + std::to_string(rc) + "; see " + installer_log);
  }
  TearDownAll(c);
}

}  // namespace

void AddInstallCases(std::vector<Case>& cases) {
  cases.push_back({"install/hot-install-during-probe", {"install"}, {"F27"}, Always, HotInstall});
}

}  // namespace flexkit::conform
