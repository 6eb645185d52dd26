#pragma once
// Where the simulator tests find the flexsim binary and the test drivers.
#include <string>

#include "tests/support/subprocess.h"

namespace flexkit::sim::testing {

inline std::string Flexsim() { return ::flexkit::testing::BuiltBinary("simulator/flexsim"); }

// tests/data/drivers/<vendor~name>/<name>
inline std::string TestDriver(const std::string& dir) {
  return std::string(FLEXKIT_SOURCE_DIR) + "/tests/data/drivers/" + dir + "/" +
         dir.substr(dir.rfind('~') + 1);
}

}  // namespace flexkit::sim::testing
