#pragma once
// Scenario files (YAML, README.md): a cluster set-up and a list of steps
// (apply manifests, delete pods, crash/restart nodes and kubelets, advance
// virtual time, write and check data in a pod's volume, assert on volume
// state). Run against one driver; the first failed step stops the run.
// Then every pod is deleted and the cluster settles, as a cluster drained
// of its pods does; the run fails too when a driver call's reply could
// not be used at all (undecodable, or the harness had to stop the call)
// though a retry hid it from the steps, or when a loop device the driver
// named is still bound after the nodes are gone.
#include <functional>
#include <string>
#include <vector>

#include "simulator/cluster.h"

namespace flexkit::sim {

struct ScenarioResult {
  bool passed = false;
  int steps_run = 0;
  std::string failure;  // which step, what was expected, what was found
  // Calls whose reply kubelet could not use, and what the run left bound.
  std::vector<std::string> problems;
};

struct ScenarioOptions {
  std::string driver;       // overrides the scenario's `driver:`
  std::string driver_name;  // overrides `driverName:` (default: the driver's folder name)
  std::string run_dir;      // where the nodes live (must exist)
  std::string transcript;   // written whatever the outcome, if set
  std::function<void(const std::string&)> log;  // live log lines
  // Where drivers run and nodes come from; null/empty: real processes
  // (BoostProcessRunner) and real nodes. Tests pass fakes.
  ProcessRunner* runner = nullptr;
  NodeFactory make_node;
};

ScenarioResult RunScenario(const std::string& scenario_path, const ScenarioOptions& options);

// `flexsim apply`: nodes named by the pods (and Node documents), the driver
// installed, the manifest applied, everything settled, then torn down.
ScenarioResult ApplyManifest(const std::string& manifest_path, const std::string& driver,
                             const ScenarioOptions& options);

}  // namespace flexkit::sim
