#include "conformance/fix_hints.h"

#include <map>
#include <utility>

namespace flexkit::conform {

std::string FixHint(const std::string& rule) {
  static const std::map<std::string, std::string> hints = {
      {"F1", "print only the one JSON reply: send tool output to /dev/null or a log file"},
      {"F2", "use printf, not echo -e/-n (dash's echo prints them literally)"},
      {"F3", "every path must print {\"status\":...}, including early exits and traps"},
      {"F4", "exit 0 with Success and Not supported, non-zero with Failure"},
      {"F5", "spell the status exactly Success, Failure or Not supported"},
      {"F6", "answer an unknown verb {\"status\":\"Not supported\"} with exit 0"},
      {"F7", "answer Not supported for a verb always or never: kubelet caches the answer"},
      {"F8", "init answers Success with boolean capabilities, e.g. {\"attach\":false}"},
      {"F9", "mount onto something already mounted is Success, with nothing mounted twice"},
      {"F10", "unmount of a dir that is not mounted (or missing) is Success"},
      {"F11", "a Success unmount leaves nothing mounted; a busy mount is a Failure, not -l"},
      {"F12", "detach of what is not attached is Success, and detach really releases it"},
      {"F13", "detach gets the volume name from getvolumename (or the PV), and the node name"},
      {"F14", "refuse to attach a volume still attached to a live node"},
      {"F15", "tolerate detach arriving while mountdevice is still running"},
      {"F16", "bound every backend call with a timeout shorter than kubelet's"},
      {"F17", "do not leave a child holding stdout: redirect or close it (>/dev/null 2>&1 &)"},
      {"F18", "honour kubernetes.io/readwrite=ro: mount -o ro (and remount bind mounts ro)"},
      {"F19", "format only a device with no filesystem (blkid first); never reformat"},
      {"F20", "base64-decode kubernetes.io/secret/* values; refuse invalid base64"},
      {"F21", "never print a secret, decoded or not, in a reply, a log or an error"},
      {"F22", "read fsGroup from kubernetes.io/mounterArgs.FsGroup and kubernetes.io/fsGroup"},
      {"F23", "take the paths from argv by position, as every kubelet release sends them"},
      {"F24", "quote every option value: never eval, never pass unquoted to a shell or -o"},
      {"F25", "match mount points exactly (mountpoint -q), never by prefix (grep)"},
      {"F26", "undo everything a call made: mounts, devices, files and processes"},
      {"F27", "install atomically: copy to a temporary name, then rename"},
      {"F28", "isattached answers Failure when the backend cannot say, never false"},
      {"F29", "getvolumename needs only the options kubelet sends; Not supported is fine"},
      {"F30", "trap errors so a crash still prints a Failure reply"},
      {"data",
       "never delete files in a dir that is not mounted: kubelet removes only an "
       "empty one"},
      {"protocol", "see the rule's § in flexvolume-protocol.md"},
      {"harness", "a flexconform problem, not the driver's: rerun, or report it with --keep"},
  };
  // A rule number that covers several duties gets the hint of the duty
  // the rule's text names.
  static const std::pair<const char*, const char*> by_duty[] = {
      {"F2 (cluster-facts §2",
       "the controller runs attach, detach and isattached with no tools on PATH: use shell "
       "builtins there, or a static binary"},
      {"F19 (protocol §4: kubernetes.io/fsType",
       "make the filesystem kubernetes.io/fsType names (mkfs -t, mount -t), not a fixed one"},
      {"F19 (protocol §7: mountdevice mounts",
       "mountdevice mounts the device at the global path, and answers Success only then"},
      {"F19 (protocol §5.6: mountdevice leaves",
       "mountdevice mounts the device at the global path, and answers Success only then"},
  };
  for (const auto& [prefix, hint] : by_duty) {
    if (rule.rfind(prefix, 0) == 0) return hint;
  }
  const std::string id = rule.substr(0, rule.find_first_of(" /(:"));
  auto it = hints.find(id);
  return it == hints.end() ? "" : it->second;
}

}  // namespace flexkit::conform
