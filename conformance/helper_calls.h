#pragma once
// What a driver hands its mount helpers: mount(8) and /sbin/mount.<type>
// are where secrets and option values end up on a node (`mount -o
// username=...,password=...`, mount.cifs's PASSWD), and where a comma in a
// value turns into options of its own. A recorder binds a small sh wrapper
// over each helper in one node's mount namespace (the host never sees
// it): the wrapper writes its argv and exported environment to the case
// dir, then execs the real helper, bound beside it under the same name
// (mount.cifs and mount.fuse read their own name). Nothing else about the
// call changes: same path, same arguments, same environment.
#include <string>
#include <vector>

#include "simulator/node.h"

namespace flexkit::conform {

struct HelperCall {
  std::vector<std::string> argv;  // argv[0] as the driver called it
  std::string environment;        // `export -p` of the helper's shell
};

// Records every mount helper call in `node` while it lives; the binds and
// the records (they hold secrets) go with it (the case's node-leak audit
// runs after). Where it cannot record
// (the case dir on a noexec mount, no mount(8)), it records nothing and
// says why in skipped().
class HelperRecorder {
 public:
  // `helper_dirs`: where mount(8) and mount.<type> are looked for.
  HelperRecorder(sim::Node& node, const std::string& case_dir,
                 const std::vector<std::string>& helper_dirs);
  ~HelperRecorder();
  HelperRecorder(const HelperRecorder&) = delete;
  HelperRecorder& operator=(const HelperRecorder&) = delete;

  // The calls made since the recorder started or since the last Clear().
  std::vector<HelperCall> Calls() const;
  void Clear();
  const std::string& skipped() const { return skipped_; }

 private:
  sim::Node& node_;
  std::string dir_;                 // where the wrappers write
  std::vector<std::string> binds_;  // node paths bound over, in order
  std::string skipped_;
};

// The option strings a mount helper got: `-o X`, `-oX`, `--options X`,
// `--options=X`.
std::vector<std::string> MountOptionStrings(const HelperCall& call);

// One option string split into its options as libmount splits it: at each
// comma outside double quotes. A doubled comma (cifs's escape for a comma
// in a password) does not split.
std::vector<std::string> SplitMountOptions(const std::string& options);

// How `value` became options of a mount helper, "" when it stayed data:
// passed as an argument of its own that starts with '-' (before any `--`,
// not the argument of -o or -t), or pasted into an option string so that
// its commas split it (two consecutive options that end with one
// comma-separated piece of `value` and are the next piece).
std::string ValueAsOptions(const std::vector<HelperCall>& calls, const std::string& value);

}  // namespace flexkit::conform
