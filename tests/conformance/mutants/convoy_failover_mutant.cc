// convoy-flexvolume with exactly one failover defect, chosen by
// $FLEXKIT_MUTANT (unset or "none": no defect, the control). Every verb is
// the real ConvoyDriver's except the one the defect wraps:
//   steal-live-attachment  attach first force-detaches the volume in the
//                          cloud wherever a peer daemon has it, so the
//                          daemon's "instance is running" refusal is skipped
//   detach-anywhere        detach also force-detaches the volume in the
//                          cloud naming only the volume, which takes it from
//                          whichever node has it now (EC2 allows that call)
//   reformat-on-adopt      attach runs mkfs on a device it newly attached
//   skip-clean-unmount     unmountdevice answers Success and leaves the
//                          filesystem mounted: nothing is flushed or
//                          released. (A lazy umount -l is no such defect:
//                          with no other reference left it is a full,
//                          flushing unmount.)
//   isattached-hides-errors  isattached answers Success + attached:false
//                          when it could not ask its daemon (F28)
// The profile's nodeEnv gives the mutant what a real driver would not
// know: $FLEXKIT_MUTANT_CLOUD (the fake cloud's socket) and
// $FLEXKIT_MUTANT_PEERS (every node daemon's socket, space-separated).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/convoy/config.h"
#include "driver/convoy/convoy_driver.h"
#include "driver/convoy/convoy_http_client.h"
#include "driver/convoy/http_unix_client.h"
#include "driver/convoy/system_driver.h"
#include "driver/convoy/volume_spec.h"
#include "driver/sdk/exec_driver.h"
#include "driver/sdk/options.h"

namespace {

using flexvolume::DriverStatus;
using flexvolume::Options;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Runs argv with every stream on /dev/null: a driver's output is protocol.
void RunQuietly(const std::vector<std::string>& argv) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  if (pid > 0) ::waitpid(pid, nullptr, 0);
}

class MutantDriver : public flexvolume::Driver {
 public:
  MutantDriver(convoy_flexvolume::ConvoyDriver& real, convoy_flexvolume::Config config,
               convoy_flexvolume::ConvoyClientFactory& clients, std::string defect)
      : real_(real), config_(std::move(config)), clients_(clients), defect_(std::move(defect)) {}

  DriverStatus Init() override { return real_.Init(); }
  DriverStatus GetVolumeName(const Options& o) override { return real_.GetVolumeName(o); }
  DriverStatus WaitForAttach(const std::string& d, const Options& o) override {
    return real_.WaitForAttach(d, o);
  }
  DriverStatus IsAttached(const Options& o, const std::string& n) override {
    DriverStatus s = real_.IsAttached(o, n);
    if (defect_ != "isattached-hides-errors" || !s.IsFailure()) return s;
    DriverStatus detached = flexvolume::Succeed();
    detached.attached = false;
    return detached;
  }
  DriverStatus MountDevice(const std::string& dir, const std::string& d,
                           const Options& o) override {
    return real_.MountDevice(dir, d, o);
  }
  DriverStatus Mount(const std::string& dir, const Options& o) override {
    return real_.Mount(dir, o);
  }
  DriverStatus Unmount(const std::string& dir) override { return real_.Unmount(dir); }

  DriverStatus Attach(const Options& opts, const std::string& node) override {
    convoy_flexvolume::VolumeSpec spec;
    try {
      spec = convoy_flexvolume::ParseVolumeSpec(opts);
    } catch (const std::invalid_argument&) {
      return real_.Attach(opts, node);
    }
    if (defect_ == "steal-live-attachment") {
      const std::string own = SocketOf(node);
      for (const auto& peer : Words(Env("FLEXKIT_MUTANT_PEERS"))) {
        if (peer == own) continue;
        const std::string id = EbsIdAt(peer, spec.name);
        if (!id.empty()) ForceDetachInCloud(id);
      }
      return real_.Attach(opts, node);
    }
    if (defect_ == "reformat-on-adopt") {
      const bool was_attached = IsAttachedAt(SocketOf(node), spec.name);
      DriverStatus s = real_.Attach(opts, node);
      if (s.IsSuccess() && !was_attached && s.device && !s.device->empty()) {
        if (spec.fs_type == "xfs") {
          RunQuietly({"mkfs.xfs", "-f", "-q", *s.device});
        } else {
          RunQuietly({"mkfs.ext4", "-F", "-q", *s.device});
        }
      }
      return s;
    }
    return real_.Attach(opts, node);
  }

  DriverStatus Detach(const std::string& volume, const std::string& node) override {
    if (defect_ != "detach-anywhere") return real_.Detach(volume, node);
    const std::string id = EbsIdAt(SocketOf(node), volume);
    DriverStatus s = real_.Detach(volume, node);
    if (s.IsSuccess() && !id.empty()) ForceDetachInCloud(id);
    return s;
  }

  DriverStatus UnmountDevice(const std::string& dir) override {
    if (defect_ != "skip-clean-unmount") return real_.UnmountDevice(dir);
    return flexvolume::Succeed();
  }

 private:
  std::string SocketOf(const std::string& node) const {
    try {
      return config_.SocketForNode(node);
    } catch (const std::runtime_error&) {
      return "";
    }
  }

  bool IsAttachedAt(const std::string& socket, const std::string& name) {
    try {
      auto info = clients_.ForSocket(socket)->Inspect(name);
      return info && info->IsAttached();
    } catch (const std::exception&) {
      return false;
    }
  }

  std::string EbsIdAt(const std::string& socket, const std::string& name) {
    try {
      auto info = clients_.ForSocket(socket)->Inspect(name);
      if (!info) return "";
      auto id = info->driver_info.find("EBSVolumeID");
      return id == info->driver_info.end() ? "" : id->second;
    } catch (const std::exception&) {
      return "";  // an unreachable peer cannot be robbed
    }
  }

  void ForceDetachInCloud(const std::string& volume_id) {
    try {
      convoy_flexvolume::HttpUnixClient cloud(Env("FLEXKIT_MUTANT_CLOUD"), std::chrono::seconds(2),
                                              std::chrono::seconds(20));
      cloud.Request("POST", "/ec2/DetachVolume",
                    nlohmann::json{{"VolumeId", volume_id}, {"Force", true}}.dump());
    } catch (const std::exception&) {
      // The defect is the attempt; the real verb goes on either way.
    }
  }

  convoy_flexvolume::ConvoyDriver& real_;
  convoy_flexvolume::Config config_;
  convoy_flexvolume::ConvoyClientFactory& clients_;
  std::string defect_;
};

}  // namespace

int main(int argc, char** argv) {
  convoy_flexvolume::SystemConvoyDriver system("convoy-failover-mutant");
  MutantDriver mutant(system.driver, system.config, system.clients, Env("FLEXKIT_MUTANT"));
  flexvolume::ExecDriver(mutant, argc, argv, system.exec);
}
