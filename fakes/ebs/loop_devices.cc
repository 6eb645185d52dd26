#include "fakes/ebs/loop_devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "fakes/common/files.h"
#include "platform/read_file.h"

namespace flexkit::fakes::ebs {
namespace {

class SystemLoopDevices : public LoopDevices {
 public:
  std::string Attach(const std::string& backing_file) override {
    int file_fd = ::open(backing_file.c_str(), O_RDWR | O_CLOEXEC);
    if (file_fd < 0) throw Error("open backing file", backing_file, errno);
    int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control < 0) {
      int err = errno;
      ::close(file_fd);
      throw Error("open /dev/loop-control for", backing_file, err);
    }
    for (int attempt = 0; attempt < 100; ++attempt) {
      int n = ::ioctl(control, LOOP_CTL_GET_FREE);
      if (n < 0) {
        int err = errno;
        ::close(control);
        ::close(file_fd);
        throw Error("LOOP_CTL_GET_FREE for", backing_file, err);
      }
      std::string device = "/dev/loop" + std::to_string(n);
      int dev_fd = ::open(device.c_str(), O_RDWR | O_CLOEXEC);
      if (dev_fd < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // udev may lag
        continue;
      }
      loop_config config{};
      config.fd = static_cast<__u32>(file_fd);
      std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), backing_file.c_str(),
                   LO_NAME_SIZE - 1);
      int rc = ::ioctl(dev_fd, LOOP_CONFIGURE, &config);
      int err = errno;
      ::close(dev_fd);
      if (rc == 0) {
        ::close(control);
        ::close(file_fd);
        return device;
      }
      if (err != EBUSY) {
        ::close(control);
        ::close(file_fd);
        throw Error("LOOP_CONFIGURE " + device + " over", backing_file, err);
      }
      // Another process took this free device first: ask again.
    }
    ::close(control);
    ::close(file_fd);
    throw Error("find a free loop device for", backing_file, EBUSY);
  }

  void Detach(const std::string& device) override {
    int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error("open loop device", device, errno);
    int rc = -1;
    for (int attempt = 0; attempt < 50; ++attempt) {
      rc = ::ioctl(fd, LOOP_CLR_FD, 0);
      if (rc == 0 || errno != EBUSY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int err = errno;
    ::close(fd);
    if (rc != 0 && err != ENXIO) throw Error("LOOP_CLR_FD", device, err);
  }

  std::string BackingFile(const std::string& device) override {
    std::string name = device.substr(device.rfind('/') + 1);
    try {
      std::string path = platform::ReadWholeFile("/sys/block/" + name + "/loop/backing_file");
      while (!path.empty() && path.back() == '\n') path.pop_back();
      return path;
    } catch (const std::exception&) {
      return "";
    }
  }

  std::map<std::string, std::string> DevicesUnder(const std::string& dir) override {
    std::map<std::string, std::string> out;
    DIR* d = ::opendir("/sys/block");
    if (d == nullptr) return out;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("loop", 0) != 0) continue;
      std::string backing = BackingFile("/dev/" + name);
      if (!backing.empty() && IsWithin(backing, dir)) out["/dev/" + name] = backing;
    }
    ::closedir(d);
    return out;
  }

  bool InUse(const std::string& device) override {
    // A mounted block device cannot be opened O_EXCL, in any mount namespace.
    int fd = ::open(device.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      return false;
    }
    return errno == EBUSY;
  }

 private:
  static std::runtime_error Error(const std::string& what, const std::string& on, int err) {
    return std::runtime_error(what + " " + on + ": " + std::strerror(err));
  }
};

}  // namespace

std::unique_ptr<LoopDevices> MakeSystemLoopDevices() {
  return std::make_unique<SystemLoopDevices>();
}

std::string FakeLoopDevices::Attach(const std::string& backing_file) {
  std::lock_guard lock(mutex_);
  std::string device = "/dev/fakeloop" + std::to_string(next_++);
  devices_[device] = backing_file;
  return device;
}

void FakeLoopDevices::Detach(const std::string& device) {
  std::lock_guard lock(mutex_);
  if (devices_.erase(device) == 0)
    throw std::runtime_error("LOOP_CLR_FD " + device + ": No such device");
  in_use_.erase(device);
}

std::string FakeLoopDevices::BackingFile(const std::string& device) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(device);
  return it == devices_.end() ? "" : it->second;
}

std::map<std::string, std::string> FakeLoopDevices::DevicesUnder(const std::string& dir) {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::string> out;
  for (const auto& [d, b] : devices_) {
    if (IsWithin(b, dir)) out[d] = b;
  }
  return out;
}

bool FakeLoopDevices::InUse(const std::string& device) {
  std::lock_guard lock(mutex_);
  return in_use_[device];
}

void FakeLoopDevices::SetInUse(const std::string& device, bool in_use) {
  std::lock_guard lock(mutex_);
  in_use_[device] = in_use;
}

}  // namespace flexkit::fakes::ebs
