#pragma once
// The profile's own fixture: `setup` before each case and `teardown` after
// it, and the optional per-node hooks (profile.h FixtureHookNames) that
// tell a real backend what happens to a node: its agent starting and
// stopping inside the node's namespace (nodeStart, nodeStop), its machine
// stopping and starting (crash, restart), its network to the backend cut
// and healed (partition, heal), and the backend's own record of what is
// attached where (attachments). Each is `sh -c` with {{node}}, {{nodes}}
// and {{case_dir}} substituted and FLEXCONFORM_CASE_DIR, FLEXCONFORM_NODES,
// FLEXCONFORM_NODE and FLEXCONFORM_FIXTURE_HOOK (the hook's name) in its
// environment; what a hook leaves running in a node's namespace, and what
// that forks, is the fixture's, never a leak of the case. A hook that exits non-zero,
// runs past its deadline or prints what it should not ends the case as a
// fixture error naming the hook and quoting its output.
#include <memory>

#include "conformance/fixture.h"

namespace flexkit::conform {

std::unique_ptr<Fixture> MakeCommandFixture(const FixtureSpec& spec);

// The `attachments` hook's output, {"<volume>": ["<node>", ...]}; throws
// std::invalid_argument saying what is wrong with it.
std::map<std::string, std::vector<std::string>> ParseAttachments(const std::string& output);

}  // namespace flexkit::conform
