#pragma once
// What the [failover] tests share: the case names and a run's verdicts.
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::testing {

inline const std::vector<std::string> kFailoverCases = {
    "failover/crash-reschedule-controller-rwo-pv",
    "failover/crash-reschedule-controller-inline",
    "failover/crash-reschedule-kubelet-rwo-pv",
    "failover/crash-reschedule-kubelet-inline",
    "failover/node-returns-before-move-controller",
    "failover/node-returns-before-move-kubelet",
    "failover/attach-refused-while-owner-alive-controller-inline",
    "failover/attach-refused-while-owner-alive-kubelet-rwo-pv",
    "failover/partition-daemon-unreachable-controller",
    "failover/partition-daemon-unreachable-kubelet",
};

// attach:false drivers only: an attachable driver SKIPs them.
inline const std::vector<std::string> kMountOnlyFailoverCases = {
    "failover/mount-only-crash-reschedule",
    "failover/mount-only-data-follows-pod",
};

inline const std::string kIsAttachedCase = "faults/isattached-with-backend-unreachable";
inline const std::string kLongMountDeviceCase = "faults/pod-deleted-during-long-mountdevice";

inline std::vector<std::string> WithFaultCases(std::vector<std::string> cases) {
  cases.push_back(kIsAttachedCase);
  cases.push_back(kLongMountDeviceCase);
  return cases;
}

// One flexconform run with a JSON report in `dir`: the process, each
// case's verdict by name, and the reasons of those that did not pass.
struct FlexconformRun {
  ProcessResult process;
  std::map<std::string, std::string> verdicts;
  std::string reasons;
};

inline FlexconformRun RunFlexconform(const TempDir& dir, std::vector<std::string> args,
                                     std::chrono::seconds deadline) {
  args.insert(args.begin(), BuiltBinary("conformance/flexconform"));
  args.insert(args.end(), {"--json", dir.Join("r.json"), "--run-root", dir.path()});
  RunOptions options;
  options.deadline = deadline;
  FlexconformRun run;
  run.process = RunProcess(args, options);
  std::ifstream in(dir.Join("r.json"));
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) return run;
  for (const auto& c : doc["cases"]) {
    run.verdicts[c["name"]] = c["verdict"];
    if (c["verdict"] != "PASS")
      run.reasons += c["name"].get<std::string>() + ": " + c["reason"].get<std::string>() + "\n";
  }
  return run;
}

}  // namespace flexkit::testing
