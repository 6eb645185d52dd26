// convoy-fake: a fake Convoy daemon (one per simulated host) and the fake
// EBS cloud it talks to. See fakes/README.md.
#include <signal.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "fakes/common/files.h"
#include "fakes/convoy/daemon.h"
#include "fakes/convoy/daemon_setup.h"
#include "fakes/convoy/ebs_driver.h"
#include "fakes/convoy/mounter.h"
#include "fakes/convoy/vfs_driver.h"
#include "fakes/ebs/cloud.h"
#include "fakes/ebs/cloud_api.h"
#include "fakes/http/unix_server.h"
#include "gojson/encode.h"

namespace {

using namespace flexkit::fakes;

struct CommonFlags {
  std::string socket;
  std::string state_dir;
  std::string socket_mode = "0600";
};

struct DaemonFlags {
  std::string drivers = "vfs";
  std::string vfs_path;
  std::string cloud;
  std::string instance_id;
  std::string host;
  bool ignore_docker_delete = false;
  bool create_on_docker_mount = false;
  std::string api = "extended";
};

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (comma > pos) out.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

void SetUpLogging(const std::string& state_dir, const std::string& role) {
  auto logger = spdlog::basic_logger_mt(role, state_dir + "/convoy-fake-" + role + ".log");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Blocks SIGTERM and SIGINT in every thread (call before starting any) and
// waits for one of them.
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int WaitForStop(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// Validated by CheckMode at parse time: octal digits only, at most 0777.
unsigned ParseMode(const std::string& mode) {
  return static_cast<unsigned>(std::stoul(mode, nullptr, 8));
}

std::string CheckMode(const std::string& mode) {
  if (mode.empty() || mode.size() > 4 || mode.find_first_not_of("01234567") != std::string::npos)
    return "--socket-mode must be an octal file mode such as 0600 or 0660, not \"" + mode + "\"";
  return "";
}

int RunDaemon(const CommonFlags& common, const DaemonFlags& flags) {
  sigset_t stop = StopSignals();
  MakeDirs(common.state_dir, 0700);
  std::string root = CleanPath(std::filesystem::absolute(common.state_dir).string());
  std::unique_ptr<convoy::RootLock> lock;
  try {
    lock = std::make_unique<convoy::RootLock>(root);
  } catch (const std::exception& e) {
    std::cout << flexkit::gojson::GoIndent({{"Error", e.what()}}) << std::endl;
    return 1;
  }
  SetUpLogging(root, "daemon");
  convoy::PersistedSettings settings = convoy::LoadOrSaveSettings(
      {.daemon = {.root = root,
                  .drivers = SplitComma(flags.drivers),
                  .ignore_docker_delete = flags.ignore_docker_delete,
                  .create_on_docker_mount = flags.create_on_docker_mount},
       .vfs_path = flags.vfs_path.empty()
                       ? root + "/volumes"
                       : CleanPath(std::filesystem::absolute(flags.vfs_path).string())});
  settings.daemon.stock = flags.api == "stock";
  auto mounter = convoy::MakeSystemMounter();
  std::vector<std::unique_ptr<convoy::VolumeDriver>> drivers;
  for (const auto& name : settings.daemon.drivers) {
    if (name == "vfs") {
      drivers.push_back(std::make_unique<convoy::VfsDriver>(
          convoy::VfsConfig{.root = root + "/vfs", .path = settings.vfs_path}, *mounter));
    } else if (name == "ebs") {
      if (flags.cloud.empty() || flags.instance_id.empty()) {
        throw std::runtime_error("start daemon: the ebs driver needs --cloud and --instance-id");
      }
      convoy::EbsConfig ebs;
      ebs.root = root + "/ebs";
      ebs.dev_dir = root + "/dev";
      ebs.cloud_socket = flags.cloud;
      ebs.instance_id = flags.instance_id;
      ebs.stock = settings.daemon.stock;
      drivers.push_back(std::make_unique<convoy::EbsDriver>(ebs, *mounter));
    } else {
      throw std::runtime_error("start daemon: unknown driver " + name + " (use vfs or ebs)");
    }
  }
  convoy::ConvoyDaemon daemon(settings.daemon, std::move(drivers));
  http::ServerOptions server_options;
  server_options.socket_path = common.socket;
  server_options.socket_mode = ParseMode(common.socket_mode);
  http::UnixServer server(server_options,
                          [&daemon](const http::Request& r) { return daemon.Handle(r); });
  server.Start();
  spdlog::info("convoy-fake daemon for host '{}' ready on {} (root {}, drivers {}, api {})",
               flags.host, common.socket, root, flags.drivers, flags.api);
  std::cout << "convoy-fake daemon ready on " << common.socket << std::endl;
  int sig = WaitForStop(stop);
  spdlog::info("stopping on signal {}", sig);
  server.Stop();
  return 0;
}

struct CloudFlags {
  std::string zone = "us-east-1a";
  int64_t transition_delay_ms = 0;
  int64_t consistency_delay_ms = 0;
  int64_t snapshot_delay_ms = 0;
};

int RunCloud(const CommonFlags& common, const CloudFlags& flags) {
  sigset_t stop = StopSignals();
  MakeDirs(common.state_dir, 0700);
  std::string root = CleanPath(std::filesystem::absolute(common.state_dir).string());
  convoy::RootLock lock(root);
  SetUpLogging(root, "cloud");
  ebs::SystemClock clock;
  auto loops = ebs::MakeSystemLoopDevices();
  ebs::CloudConfig config;
  config.state_dir = root;
  config.availability_zone = flags.zone;
  config.transition_delay_ms = flags.transition_delay_ms;
  config.consistency_delay_ms = flags.consistency_delay_ms;
  config.snapshot_delay_ms = flags.snapshot_delay_ms;
  ebs::Cloud cloud(config, clock, *loops);
  http::ServerOptions server_options;
  server_options.socket_path = common.socket;
  server_options.socket_mode = ParseMode(common.socket_mode);
  http::UnixServer server(server_options, [&cloud](const http::Request& r) {
    return ebs::HandleCloudRequest(cloud, r);
  });
  server.Start();
  // Timed transitions (and busy detaches whose device got unmounted) move
  // on even when nobody calls.
  std::mutex ticker_mutex;
  std::condition_variable ticker_wake;
  bool stopping = false;
  std::thread ticker([&] {
    std::unique_lock guard(ticker_mutex);
    while (!ticker_wake.wait_for(guard, std::chrono::milliseconds(50), [&] { return stopping; })) {
      guard.unlock();
      cloud.Tick();
      guard.lock();
    }
  });
  spdlog::info("convoy-fake cloud ready on {} (state {}, zone {})", common.socket, root,
               flags.zone);
  std::cout << "convoy-fake cloud ready on " << common.socket << std::endl;
  int sig = WaitForStop(stop);
  spdlog::info("stopping on signal {}", sig);
  server.Stop();
  {
    std::lock_guard guard(ticker_mutex);
    stopping = true;
  }
  ticker_wake.notify_all();
  ticker.join();
  return 0;
}

// The flags both roles have: --socket (with its default), --state-dir, --socket-mode.
void AddCommonFlags(CLI::App* role, CommonFlags& flags, const std::string& default_socket,
                    const std::string& socket_help, const std::string& state_dir_help) {
  flags.socket = default_socket;
  role->add_option("--socket", flags.socket, socket_help)->capture_default_str();
  role->add_option("--state-dir", flags.state_dir, state_dir_help)->required();
  role->add_option("--socket-mode", flags.socket_mode, "socket file mode (octal)")
      ->check(CheckMode)
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"convoy-fake: a fake Convoy daemon and EBS cloud for FlexVolume tests"};
  app.set_version_flag("--version", std::string("convoy-fake ") + FLEXKIT_VERSION);
  app.footer(
      "Exit codes: 0 stopped cleanly (SIGTERM/SIGINT), 1 could not start or failed while\n"
      "serving (the reason is printed), 2 usage error.");
  app.require_subcommand(1);
  CommonFlags daemon_common;
  DaemonFlags daemon_flags;
  CLI::App* daemon = app.add_subcommand("daemon", "one Convoy daemon for one host");
  AddCommonFlags(daemon, daemon_common, "/var/run/convoy/convoy.sock", "Convoy API socket",
                 "root: metadata, lock, log");
  daemon->add_option("--drivers", daemon_flags.drivers, "vfs, ebs or vfs,ebs (first is default)")
      ->capture_default_str();
  daemon->add_option("--vfs-path", daemon_flags.vfs_path,
                     "vfs volumes directory (default <state-dir>/volumes)");
  daemon->add_option("--cloud", daemon_flags.cloud, "the cloud's socket (ebs driver)");
  daemon->add_option("--instance-id", daemon_flags.instance_id,
                     "this host's instance (ebs driver)");
  daemon->add_option("--host", daemon_flags.host, "this host's name, for logs");
  daemon->add_flag("--ignore-docker-delete", daemon_flags.ignore_docker_delete);
  daemon->add_flag("--create-on-docker-mount", daemon_flags.create_on_docker_mount);
  daemon
      ->add_option("--api", daemon_flags.api,
                   "extended: v0.5.2 with the Kubernetes extensions; stock: v0.5.2 as released")
      ->check(CLI::IsMember({"extended", "stock"}))
      ->capture_default_str();
  CommonFlags cloud_common;
  CloudFlags cloud_flags;
  CLI::App* cloud = app.add_subcommand("cloud", "the EBS cloud model and its admin API");
  AddCommonFlags(cloud, cloud_common, "/var/run/convoy-fake/cloud.sock", "cloud API socket",
                 "volumes, snapshots, state.json, lock, log");
  cloud->add_option("--az", cloud_flags.zone, "availability zone")->capture_default_str();
  cloud
      ->add_option("--attach-delay", cloud_flags.transition_delay_ms,
                   "ms each transition takes (creating, attaching, detaching, deleting)")
      ->capture_default_str();
  cloud
      ->add_option("--consistency-delay", cloud_flags.consistency_delay_ms,
                   "ms a new volume stays invisible to DescribeVolumes")
      ->capture_default_str();
  cloud
      ->add_option("--snapshot-delay", cloud_flags.snapshot_delay_ms,
                   "ms a new snapshot stays pending before it is completed")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints the help, the version or the error
    return rc == 0 ? 0 : 2;
  }
  try {
    if (daemon->parsed()) return RunDaemon(daemon_common, daemon_flags);
    if (cloud->parsed()) return RunCloud(cloud_common, cloud_flags);
  } catch (const std::exception& e) {
    std::cerr << "convoy-fake: " << e.what() << std::endl;
    spdlog::error("{}", e.what());
    return 1;
  }
  return 2;
}
