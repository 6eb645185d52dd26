#pragma once
// Time behind an interface, so waiting (waitforattach) is testable without
// sleeping.
#include <chrono>

namespace convoy_flexvolume {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual void SleepFor(std::chrono::milliseconds d) = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::milliseconds d) override;
};

}  // namespace convoy_flexvolume
