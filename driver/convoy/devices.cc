#include "driver/convoy/devices.h"

#include <sys/stat.h>

namespace convoy_flexvolume {

bool SystemDevices::Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && (S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode));
}

}  // namespace convoy_flexvolume
