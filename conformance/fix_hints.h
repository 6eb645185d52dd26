#pragma once
// One line a driver author can act on, per rule a case reports broken:
// what kubelet needs, and the usual fix in a shell or Go driver.
#include <string>

namespace flexkit::conform {

// The hint for `rule` ("F18 (protocol §4: ...)", "protocol §7: teardown
// succeeds", "harness"); empty when there is none.
std::string FixHint(const std::string& rule);

}  // namespace flexkit::conform
