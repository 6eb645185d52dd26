#pragma once
// kubelet's and the controller's flexVolumeProber + VolumePluginMgr
// (reference §1.3): the plugin dir watched with inotify; the first probe
// initialises every driver folder, later probes only folders with events;
// a new plugin object (with `init` run and an empty Not-supported cache) on
// every add or update; a failed `init` retried on every later probe, except
// for a failure in the first scan; invalid names refused.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "simulator/driver_invoker.h"
#include "simulator/driver_status.h"
#include "simulator/version_profile.h"
#include "simulator/volume_operations.h"

namespace flexkit::sim {

// One loaded driver, as flexVolumePlugin holds it.
struct FlexPlugin {
  std::string driver_name;  // "k8s/dummy"
  std::string executable;
  DriverCapabilities capabilities;
  std::set<std::string> unsupported;  // verbs answered "Not supported": not run again
};

class Prober {
 public:
  // `component` ("kubelet" or "controller") labels the transcript.
  Prober(Node& node, std::string plugin_dir, std::string component, DriverInvoker& invoker,
         const VersionProfile& profile);
  ~Prober();
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  // refreshProbedPlugins: consumes watch events and (re)initialises drivers.
  // Returns the errors of this probe ("Error creating Flexvolume plugin from
  // directory X, skipping: why").
  std::vector<std::string> Probe();

  // FindPluginByName: probes first, as every lookup does. nullptr if absent.
  std::shared_ptr<FlexPlugin> Find(const std::string& driver_name);
  std::vector<std::string> PluginNames() const;

  // Runs `args` against `plugin` honouring its Not-supported cache.
  CallResult Call(FlexPlugin& plugin, const Args& args, const Redactor& redactor);

 private:
  void AddWatches(const std::string& dir);
  void DrainEvents();
  void InitDriver(const std::string& dir_name, bool remember_failure);

  Node& node_;
  std::string plugin_dir_;
  std::string component_;
  DriverInvoker& invoker_;
  const VersionProfile& profile_;
  int inotify_fd_ = -1;
  std::map<int, std::string> watches_;  // wd -> directory
  bool probed_all_ = false;
  // dir name -> true: add or update, false: remove (Go's eventsMap).
  std::map<std::string, bool> pending_;
  std::map<std::string, std::shared_ptr<FlexPlugin>> plugins_;  // by driver name
};

// The driver calls of one component (kubelet's or the controller's)
// through its prober: each call's driver looked up by name (probing first,
// as every plugin lookup does) and run honouring the plugin's Not-supported
// cache. A driver with no plugin answers as kubelet's lookup fails.
class ProberCaller : public DriverCaller {
 public:
  explicit ProberCaller(Prober& prober) : prober_(prober) {}
  CallResult Call(const DriverCall& call) override;

 private:
  Prober& prober_;
};

}  // namespace flexkit::sim
