#pragma once
// What the [failover] tests share: the case names and a report's verdicts.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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

inline const std::string kIsAttachedCase = "faults/isattached-with-backend-unreachable";
inline const std::string kLongMountDeviceCase = "faults/pod-deleted-during-long-mountdevice";

inline std::vector<std::string> WithFaultCases(std::vector<std::string> cases) {
  cases.push_back(kIsAttachedCase);
  cases.push_back(kLongMountDeviceCase);
  return cases;
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// name -> verdict, and the reasons of the failures for messages.
inline std::map<std::string, std::string> Verdicts(const nlohmann::json& doc,
                                                   std::string* reasons) {
  std::map<std::string, std::string> verdicts;
  for (const auto& c : doc["cases"]) {
    verdicts[c["name"]] = c["verdict"];
    if (c["verdict"] != "PASS")
      *reasons += c["name"].get<std::string>() + ": " + c["reason"].get<std::string>() + "\n";
  }
  return verdicts;
}

}  // namespace flexkit::testing
