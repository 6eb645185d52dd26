#include "conformance/default_profiles.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "simulator/boost_process_runner.h"
#include "simulator/call_command.h"
#include "simulator/judge.h"

namespace flexkit::conform {

std::string DriverNameFor(const std::string& driver_path) {
  const std::string folder = std::filesystem::path(driver_path).parent_path().filename().string();
  return folder.find('~') != std::string::npos
             ? sim::DriverNameFromPath(driver_path)
             : "flexconform/" + std::filesystem::path(driver_path).filename().string();
}

DriverProfile DeriveProfile(const std::string& driver_path) {
  DriverProfile p;
  p.driver = std::filesystem::absolute(driver_path).lexically_normal().string();
  p.driver_name = DriverNameFor(p.driver);
  sim::BoostProcessRunner runner;
  sim::ProcessSpec spec;
  spec.executable = p.driver;
  spec.args = {"init"};
  spec.harness_deadline = std::chrono::seconds(10);
  auto result = runner.Run(spec);
  if (!result.spawn_error.empty())
    throw std::runtime_error("run " + p.driver + " init: " + result.spawn_error);
  auto verdict = sim::Judge("init", result.exit, result.combined);
  if (verdict.outcome != sim::Outcome::kSuccess || !verdict.status ||
      !verdict.status->capabilities) {
    throw std::runtime_error("derive a profile from " + p.driver + " init: " +
                             (verdict.error.empty() ? "no capabilities" : verdict.error) +
                             " (write a profile with --profile instead)");
  }
  p.capabilities = *verdict.status->capabilities;
  // kubelet's defaults: controller-managed attach, and a second node so
  // that [sequence] covers two and [failover] can move a pod.
  p.kubelet_managed_attach = false;
  p.nodes = 2;
  return p;
}

DriverProfile BundledConvoyProfile(const std::string& flexconform_dir) {
  DriverProfile p;
  const char* driver = std::getenv("FLEXCONFORM_CONVOY_DRIVER");
  p.driver = std::filesystem::weakly_canonical(
                 driver ? std::string(driver) : flexconform_dir + "/../driver/convoy-flexvolume")
                 .string();
  p.driver_name = "rancher.io/convoy";
  sim::DriverCapabilities caps = sim::DriverCapabilities::Defaults();
  caps.attach = true;
  caps.supports_metrics = true;
  caps.requires_fs_resize = false;
  p.capabilities = caps;
  p.kubelet_managed_attach = true;         // Convoy daemons are node-local (DESIGN §4.2)
  p.volume_options = {{"size", "320Mi"}};  // XFS needs 300 MiB; the fake makes sparse files
  p.fs_types = {"ext4", "xfs"};
  p.invalid_options = {{"size", "-1"}};  // the driver refuses it before asking the daemon
  p.install = {"{{driver}}", "install", "--plugin-dir", "{{plugin_dir}}"};
  p.fixture.kind = "convoy-fake";
  p.nodes = 2;  // [failover] moves a volume from one node to another
  return p;
}

DriverProfile BundledStockConvoyProfile(const std::string& flexconform_dir) {
  DriverProfile p = BundledConvoyProfile(flexconform_dir);
  p.fixture.api = "stock";
  p.fs_types = {"ext4"};  // v0.5.2 formats EBS volumes as ext4 only
  // B's attach must take the volume from A's stopped instance: v0.5.2 has
  // no detach-before-attach, so the driver can only answer a Failure that
  // says so (and does: convoy_driver_integration_test StockTakeOverIsAFailureNotAHang).
  for (const char* who : {"controller-inline", "kubelet-rwo-pv", "kubelet-inline"}) {
    p.skip[std::string("failover/crash-reschedule-") + who] =
        "stock Convoy v0.5.2 cannot take an EBS volume over from another instance (no "
        "detach-before-attach; it needs a daemon with the Kubernetes extensions)";
  }
  return p;
}

}  // namespace flexkit::conform
