#pragma once
// Time for the cloud's timed transitions, behind a seam so tests can step it.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace flexkit::fakes::ebs {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() = 0;  // monotonic milliseconds
};

class SystemClock : public Clock {
 public:
  int64_t NowMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to.
class ManualClock : public Clock {
 public:
  int64_t NowMs() override { return now_; }
  void Advance(int64_t ms) { now_ += ms; }

 private:
  std::atomic<int64_t> now_{1000};
};

}  // namespace flexkit::fakes::ebs
