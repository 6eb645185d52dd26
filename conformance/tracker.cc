#include "conformance/tracker.h"

#include <exception>
#include <stdexcept>

namespace flexkit::conform {

Tracker::Handle Tracker::Push(std::string what, std::function<void()> undo) {
  std::lock_guard lock(mutex_);
  entries_.push_back({std::move(what), std::move(undo), false});
  return entries_.size() - 1;
}

void Tracker::RunNow(Handle handle) {
  std::function<void()> undo;
  {
    std::lock_guard lock(mutex_);
    if (handle >= entries_.size() || entries_[handle].done) {
      throw std::logic_error("tracker: undo " + std::to_string(handle) + " already ran");
    }
    entries_[handle].done = true;  // not retried by UnwindAll, even if it throws
    undo = entries_[handle].undo;
  }
  undo();
}

std::vector<std::string> Tracker::UnwindAll() {
  std::vector<std::string> errors;
  for (;;) {
    Entry entry;
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.rbegin();
      while (it != entries_.rend() && it->done) ++it;
      if (it == entries_.rend()) break;
      it->done = true;
      entry = *it;
    }
    try {
      entry.undo();
    } catch (const std::exception& e) {
      errors.push_back(entry.what + ": " + e.what());
    }
  }
  return errors;
}

std::size_t Tracker::pending() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& e : entries_) n += e.done ? 0 : 1;
  return n;
}

}  // namespace flexkit::conform
