#pragma once
// The record of a run: every driver call (node, component, argv with secrets
// redacted, environment changes, exit, stdout and stderr bytes by stream,
// duration, verdict, mounts added and removed) and the scenario's events.
// Written as JSON; safe to append from several threads.
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulator/judge.h"
#include "simulator/mount_table.h"
#include "simulator/process_runner.h"

namespace flexkit::sim {

struct CallRecord {
  std::string node;
  std::string component;  // "kubelet", "controller" or "cli"
  std::string verb;
  std::vector<std::string> argv;  // argv[0] included, secrets redacted
  std::map<std::string, std::string> env_changes;
  ProcessResult process;             // output bytes redacted
  Verdict verdict;                   // message and error redacted
  std::string harness_problem;       // empty, or why kubelet would hang / output was cut
  bool answered_from_cache = false;  // "Not supported" cached: the driver was not run
  std::vector<MountEntry> mounts_added;
  std::vector<MountEntry> mounts_removed;
};

nlohmann::ordered_json CallRecordToJson(const CallRecord& record);

class Transcript {
 public:
  // Returns the record's position among the calls (0 first).
  std::size_t AddCall(const CallRecord& record);
  void AddEvent(const std::string& what, nlohmann::ordered_json details = {});
  nlohmann::ordered_json ToJson() const;
  void WriteTo(const std::string& path) const;  // throws naming the path
  std::vector<CallRecord> Calls() const;
  // Forgets every call and event so far (a run of many independent
  // sequences keeps only the one it reports).
  void Clear();
  // Called (under the lock) for every call added: the live log.
  void SetCallObserver(std::function<void(const CallRecord&)> observer);

 private:
  std::function<void(const CallRecord&)> observer_;
  mutable std::mutex mutex_;
  std::vector<CallRecord> calls_;
  nlohmann::ordered_json entries_ = nlohmann::ordered_json::array();
};

}  // namespace flexkit::sim
