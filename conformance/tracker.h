#pragma once
// What a case created, undone in reverse order (csi-sanity's cleanup
// tracker, anchors §1.5): every set-up step registers its undo; a case that
// tears down by itself retires the undo; whatever is left runs LIFO after
// the case, even when it failed, and each undo's error is kept, not thrown.
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace flexkit::conform {

class Tracker {
 public:
  using Handle = std::size_t;
  Handle Push(std::string what, std::function<void()> undo);
  // Runs one undo now (the case's own teardown) and retires it; throws what
  // the undo throws.
  void RunNow(Handle handle);
  // Runs every remaining undo, newest first; returns "what: why" per failure.
  std::vector<std::string> UnwindAll();
  std::size_t pending() const;

 private:
  struct Entry {
    std::string what;
    std::function<void()> undo;
    bool done = false;
  };
  mutable std::mutex mutex_;  // concurrent cases set up volumes from several threads
  std::vector<Entry> entries_;
};

}  // namespace flexkit::conform
