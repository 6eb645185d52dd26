#pragma once
// Kubernetes' timers (sync period, maxWaitForUnmountDuration) read a Clock;
// the simulator's is virtual, so a six-minute wait costs no real time.
#include <chrono>

namespace flexkit::sim {

class Clock {
 public:
  using Duration = std::chrono::milliseconds;
  virtual ~Clock() = default;
  virtual Duration Now() const = 0;  // since the clock's start
};

class VirtualClock : public Clock {
 public:
  Duration Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }

 private:
  Duration now_{0};
};

}  // namespace flexkit::sim
