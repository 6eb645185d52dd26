// flexkit-tmpfs: install as <plugindir>/flexkit~tmpfs/tmpfs.
// FLEXKIT_TMPFS_LOG=FILE logs each call (secrets redacted) to FILE.
#include <cstdlib>

#include "driver/samples/tmpfs/tmpfs_driver.h"
#include "driver/sdk/exec_driver.h"

int main(int argc, char** argv) {
  flexvolume::SystemMounter mounter;
  flexkit::tmpfs::TmpfsDriver driver(mounter);
  flexvolume::ExecConfig config;
  if (const char* log = std::getenv("FLEXKIT_TMPFS_LOG")) config.log.file = log;
  config.log.ident = "flexkit-tmpfs";
  flexvolume::ExecDriver(driver, argc, argv, config);
}
