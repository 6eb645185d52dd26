#include "simulator/transcript.h"

#include <fstream>
#include <stdexcept>

#include "simulator/verdict_json.h"

namespace flexkit::sim {
namespace {

nlohmann::ordered_json MountsToJson(const std::vector<MountEntry>& mounts) {
  auto j = nlohmann::ordered_json::array();
  for (const auto& m : mounts) {
    j.push_back(
        {{"target", m.target}, {"source", m.source}, {"type", m.fs_type}, {"options", m.options}});
  }
  return j;
}

}  // namespace

nlohmann::ordered_json CallRecordToJson(const CallRecord& r) {
  nlohmann::ordered_json j;
  j["node"] = r.node;
  j["component"] = r.component;
  j["verb"] = r.verb;
  j["argv"] = r.argv;
  j["env_changes"] = r.env_changes;
  if (r.answered_from_cache) {
    j["executed"] = false;
  } else {
    j["executed"] = true;
    if (r.process.exit.signal != 0) {
      j["signal"] = r.process.exit.signal;
    } else {
      j["exit_code"] = r.process.exit.exit_code;
    }
    auto chunks = nlohmann::ordered_json::array();
    for (const auto& c : r.process.chunks) {
      chunks.push_back({{"stream", c.stream == Stream::kStdout   ? "stdout"
                                   : c.stream == Stream::kStderr ? "stderr"
                                                                 : "stdout+stderr"},
                        {"bytes", c.bytes}});
    }
    j["output"] = chunks;
    j["duration_ms"] = r.process.duration.count();
    if (!r.process.spawn_error.empty()) j["spawn_error"] = r.process.spawn_error;
  }
  j["verdict"] = VerdictToJson(r.verdict, true);
  j["harness_problem"] = r.harness_problem.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(r.harness_problem);
  j["mounts_added"] = MountsToJson(r.mounts_added);
  j["mounts_removed"] = MountsToJson(r.mounts_removed);
  return j;
}

std::size_t Transcript::AddCall(const CallRecord& record) {
  std::lock_guard lock(mutex_);
  calls_.push_back(record);
  if (observer_) observer_(record);
  auto j = CallRecordToJson(record);
  j["type"] = "call";
  entries_.push_back(std::move(j));
  return calls_.size() - 1;
}

void Transcript::Clear() {
  std::lock_guard lock(mutex_);
  calls_.clear();
  entries_ = nlohmann::ordered_json::array();
}

void Transcript::AddEvent(const std::string& what, nlohmann::ordered_json details) {
  std::lock_guard lock(mutex_);
  nlohmann::ordered_json j = {{"type", "event"}, {"event", what}};
  if (!details.is_null()) j["details"] = std::move(details);
  entries_.push_back(std::move(j));
}

void Transcript::SetCallObserver(std::function<void(const CallRecord&)> observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

nlohmann::ordered_json Transcript::ToJson() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

std::vector<CallRecord> Transcript::Calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

void Transcript::WriteTo(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("write transcript " + path + ": cannot open");
  out << ToJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out) throw std::runtime_error("write transcript " + path + ": write failed");
}

}  // namespace flexkit::sim
