// [install]: a hot install while kubelet probes (F27). kubelet re-runs init
// on every change in the driver's folder; the suite installs the driver the
// safe way (a dot-file, then rename) while init runs in a loop on the
// watched name, and every init must answer. Installing in place is what
// rook#2064 did; the suite does not do it, because a partial binary is the
// installer's fault, not the driver's.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

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
  std::atomic<bool> done{false};
  std::thread installer([&] {
    for (int i = 0; i < 5 && !done; ++i) {
      std::filesystem::copy_file(c.profile().driver, staging,
                                 std::filesystem::copy_options::overwrite_existing);
      std::filesystem::rename(staging, target);
    }
  });
  try {
    for (int i = 0; i < 5; ++i)
      c.Require(n, c.argv().Init(), "F27 (protocol §1: init answers during an install)", "kubelet",
                target.string());
  } catch (...) {
    done = true;
    installer.join();
    throw;
  }
  installer.join();
  TearDownAll(c);
}

}  // namespace

void AddInstallCases(std::vector<Case>& cases) {
  cases.push_back({"install/hot-install-during-probe", {"install"}, {"F27"}, Always, HotInstall});
}

}  // namespace flexkit::conform
