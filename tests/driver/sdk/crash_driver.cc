// A driver that misbehaves on purpose, to prove the SDK still answers with
// exactly one Failure reply: each verb fails in its own way.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

#include "driver/sdk/exec_driver.h"

namespace {

using flexvolume::DriverStatus;
using flexvolume::Options;

int* volatile g_null = nullptr;

// std::terminate while an exception is being handled, as when one escapes a
// noexcept function.
[[noreturn]] void TerminateWithActiveException() {
  try {
    throw std::runtime_error("escaped a noexcept function");
  } catch (...) {
    std::terminate();
  }
}

class CrashDriver final : public flexvolume::Driver {
 public:
  DriverStatus Init() override { return flexvolume::Succeed(); }

  // An exception out of the verb: caught by the dispatcher.
  DriverStatus Attach(const Options&, const std::string&) override {
    throw std::runtime_error("attach exploded");
  }
  // std::terminate with an active exception.
  DriverStatus Detach(const std::string&, const std::string&) override {
    TerminateWithActiveException();
  }
  DriverStatus Mount(const std::string&, const Options&) override { abort(); }
  // A real SIGSEGV even in sanitizer builds, where UBSan would otherwise
  // report the store and exit first.
  __attribute__((no_sanitize("undefined"))) DriverStatus Unmount(const std::string&) override {
    *g_null = 1;
    return flexvolume::Succeed();
  }
  DriverStatus IsAttached(const Options&, const std::string&) override {
    raise(SIGFPE);
    return flexvolume::Succeed();
  }
  DriverStatus WaitForAttach(const std::string&, const Options&) override {
    raise(SIGBUS);
    return flexvolume::Succeed();
  }
  // A thread that throws: std::terminate from another thread.
  DriverStatus GetVolumeName(const Options&) override {
    std::thread([] { throw std::runtime_error("thread exploded"); }).join();
    return flexvolume::Succeed();
  }
  // Noise from the driver, a library and a child process that outlives the
  // driver holding whatever fds it inherited. The child lives long enough
  // (the test kills it) that a slow, loaded machine still finds it alive.
  DriverStatus MountDevice(const std::string&, const std::string&, const Options&) override {
    printf("library chatter on stdout\n");
    fflush(stdout);
    fprintf(stderr, "library chatter on stderr\n");
    if (system("echo child chatter; echo child error >&2; (sleep 60 &)") != 0) {
      return flexvolume::Fail("mountdevice: could not run the child");
    }
    return flexvolume::Succeed();
  }
  // A crash after the reply logic, inside a secret-bearing verb: the
  // message is scrubbed.
  DriverStatus UnmountDevice(const std::string&) override { abort(); }
};

}  // namespace

int main(int argc, char** argv) {
  CrashDriver driver;
  flexvolume::ExecDriver(driver, argc, argv);
}
