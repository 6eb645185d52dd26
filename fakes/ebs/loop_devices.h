#pragma once
// Loop devices behind a seam: the real one uses /dev/loop-control
// (LOOP_CTL_GET_FREE + LOOP_CONFIGURE, retrying when another process takes
// the free device first); tests of the cloud model use the fake one.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace flexkit::fakes::ebs {

class LoopDevices {
 public:
  virtual ~LoopDevices() = default;
  // A new loop device over `backing_file`, e.g. "/dev/loop7". Throws with why.
  virtual std::string Attach(const std::string& backing_file) = 0;
  virtual void Detach(const std::string& device) = 0;
  // The backing file of `device`, "" when it has none (or does not exist).
  virtual std::string BackingFile(const std::string& device) = 0;
  // Every loop device whose backing file lies under `dir`.
  virtual std::map<std::string, std::string> DevicesUnder(const std::string& dir) = 0;
  // True while something (a mount) holds the device exclusively.
  virtual bool InUse(const std::string& device) = 0;
};

std::unique_ptr<LoopDevices> MakeSystemLoopDevices();

class FakeLoopDevices : public LoopDevices {
 public:
  std::string Attach(const std::string& backing_file) override;
  void Detach(const std::string& device) override;
  std::string BackingFile(const std::string& device) override;
  std::map<std::string, std::string> DevicesUnder(const std::string& dir) override;
  bool InUse(const std::string& device) override;
  void SetInUse(const std::string& device, bool in_use);

 private:
  std::mutex mutex_;
  int next_ = 0;
  std::map<std::string, std::string> devices_;  // device -> backing file
  std::map<std::string, bool> in_use_;
};

}  // namespace flexkit::fakes::ebs
