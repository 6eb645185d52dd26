#include "conformance/call_timing.h"

#include <chrono>

namespace flexkit::conform {
namespace {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

sim::ProcessResult CallTiming::Run(const sim::ProcessSpec& spec) {
  CallWindow window;
  window.start_ms = NowMs();
  sim::ProcessResult result = inner_.Run(spec);
  window.end_ms = NowMs();
  std::lock_guard lock(mutex_);
  pending_[std::this_thread::get_id()] = window;
  return result;
}

void CallTiming::Observe(const sim::CallRecord& record) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(std::this_thread::get_id());
  if (record.answered_from_cache || it == pending_.end()) {
    const std::int64_t now = NowMs();
    windows_.push_back(CallWindow{now, now});
    return;
  }
  windows_.push_back(it->second);
  pending_.erase(it);
}

std::vector<CallWindow> CallTiming::Windows() const {
  std::lock_guard lock(mutex_);
  return windows_;
}

}  // namespace flexkit::conform
