#include "conformance/rules.h"

namespace flexkit::conform {

namespace {

// Constant data, initialised before any code runs: Rules() may be called
// from another file's static initialiser.
struct RuleText {
  const char* id;
  const char* hint;
};

constexpr RuleText kRules[] = {
    {"F1/F2/F3 one-json-reply",
     "print exactly one JSON reply on stdout and stderr together (printf, not echo -e): send "
     "tool output and logs to a file or /dev/null, and reply on every path, crashes included"},
    {"F2 controller-path",
     "the controller runs attach, detach and isattached with no tools on PATH: use shell "
     "builtins there, or a static binary"},
    {"F3/F4/F5 init-success",
     "init prints {\"status\":\"Success\",\"capabilities\":{...}} and exits 0"},
    {"F4 exit-code", "exit 0 with Success and Not supported, non-zero only with Failure"},
    {"F6 unknown-verb", "answer an unknown verb {\"status\":\"Not supported\"} with exit 0"},
    {"F7 stable-not-supported",
     "answer Not supported for a verb always or never: kubelet caches the answer"},
    {"F8 init-capabilities",
     "init answers Success with capabilities as JSON booleans, e.g. {\"attach\":false}; "
     "never null, never quoted"},
    {"F8 capabilities-match",
     "declare attach:false unless the driver implements attach, waitforattach and "
     "mountdevice; declare the other capabilities only for what it does"},
    {"F8 attach-succeeds",
     "attach answers Success for a valid volume and the node name it is given (the Node "
     "object's name, not necessarily the hostname)"},
    {"F8 attach-device",
     "attach answers {\"status\":\"Success\",\"device\":\"/dev/...\"}: kubelet hands that "
     "device to waitforattach"},
    {"F8 waitforattach-device",
     "waitforattach answers Success with the device mountdevice should use (echo the one it "
     "was given when it has nothing better)"},
    {"F8 mountdevice-fallback",
     "implement mountdevice, or have attach return a block device kubelet can format and "
     "mount"},
    {"F8 mount-fallback",
     "implement mount, or have mountdevice mount the volume at the global path kubelet "
     "bind-mounts from"},
    {"F8 mount-only-implements-mount",
     "a driver with attach:false must implement mount: kubelet has nothing to bind-mount"},
    {"F9 attach-idempotent",
     "attach of a volume already attached to that node is Success, with the same device"},
    {"F9 attach-same-device",
     "a repeated attach returns the device the first one returned: look the attachment up, "
     "do not attach again"},
    {"F9 mountdevice-idempotent",
     "mountdevice where the device is already mounted is Success, with nothing mounted twice"},
    {"F9 mount-idempotent",
     "mount onto something already mounted is Success, with nothing mounted twice"},
    {"F9 no-stacked-mounts",
     "check the target first (mountpoint -q) and mount only when nothing is there: never "
     "stack a second mount"},
    {"F10 unmount-succeeds",
     "unmount answers Success once the dir is unmounted, Failure only while it still is"},
    {"F10 unmount-idempotent", "unmount of a dir that is not mounted (or missing) is Success"},
    {"F10 unmountdevice-succeeds",
     "unmountdevice answers Success once the global path is unmounted"},
    {"F10 unmountdevice-idempotent", "unmountdevice of a path that is not mounted is Success"},
    {"F11 unmount-unmounts",
     "a Success unmount leaves nothing mounted; a busy mount is a Failure, not umount -l"},
    {"F11 unmountdevice-unmounts",
     "a Success unmountdevice leaves nothing mounted at the global path (every layer)"},
    {"F11 dir-removable",
     "leave the dir empty after unmounting (or remove it): kubelet removes it with a plain "
     "rmdir"},
    {"F12 detach-succeeds",
     "detach answers Success once the volume is released from the node named in argv"},
    {"F12 detach-idempotent", "detach of a volume that is not attached (or never was) is Success"},
    {"F12 detach-releases",
     "detach really releases the attachment in the backend before it answers Success"},
    {"F12 late-detach",
     "detach releases the volume from the node named in argv only, and is Success when it is "
     "already gone"},
    {"F14 follows-pod",
     "refuse to attach a volume still attached to another live node, with a message saying "
     "where it is"},
    {"F14 data-intact",
     "keep the data: format only a device with no filesystem (blkid first), and sync before "
     "unmountdevice and detach answer Success"},
    {"F14 returning-node-harmless",
     "a returning node's teardown touches only that node's mounts and attachments, never "
     "the volume's new home"},
    {"F15 detach-during-mountdevice",
     "tolerate detach arriving while mountdevice is still running"},
    {"F16 no-hang", "bound every backend call with a timeout shorter than kubelet's"},
    {"F17 output-closed",
     "do not leave a child holding stdout: redirect or close it (>/dev/null 2>&1 &)"},
    {"F18 read-only",
     "honour kubernetes.io/readwrite=ro: mount -o ro (and remount bind mounts ro)"},
    {"F19 fstype-honoured",
     "make the filesystem kubernetes.io/fsType names (mkfs -t, mount -t), not a fixed one"},
    {"F19 never-reformat", "format only a device with no filesystem (blkid first); never reformat"},
    {"F19 mountdevice-mounts",
     "mountdevice mounts the device at the global path, and answers Success only then"},
    {"F20 secrets-base64", "base64-decode kubernetes.io/secret/* values; refuse invalid base64"},
    {"F20 secrets-decoded",
     "base64-decode each kubernetes.io/secret/* value before using it: kubelet sends the "
     "encoded form, never the secret"},
    {"F21 no-secret-leak", "never print a secret, decoded or not, in a reply, a log or an error"},
    {"F22 fsgroup-key",
     "read fsGroup from kubernetes.io/mounterArgs.FsGroup and kubernetes.io/fsGroup"},
    {"F23 argv-positions",
     "take the paths from argv by position, as every kubelet release sends them"},
    {"F24 data-not-code",
     "quote every option value: never eval, never pass unquoted to a shell or -o"},
    {"F25 exact-mount-state", "match mount points exactly (mountpoint -q), never by prefix (grep)"},
    {"F26 no-leaks", "undo everything a call made: mounts, devices, files and processes"},
    {"F27 executable",
     "install the driver executable (chmod +x), named after the last part of its folder: "
     "vendor~name/name"},
    {"F27 atomic-install", "install atomically: copy to a temporary dot-name, then rename"},
    {"F28 isattached-honest",
     "isattached answers attached:true exactly where the backend has the volume attached, "
     "and Failure when it cannot tell, never false"},
    {"F29 getvolumename-never-fails",
     "getvolumename needs only the options kubelet sends; Not supported is fine"},
    {"success-is-true",
     "answer Success only once the mount exists and works: check it before replying"},
    {"probe-storm",
     "keep logs and state outside the plugin dir, or under a dot-name kubelet ignores"},
    {"mount-succeeds",
     "mount a valid volume and answer Success; a Failure's message says what failed"},
    {"volume-usable",
     "mount the volume read-write unless readwrite=ro: the pod writes and reads it back"},
    {"data-loss",
     "never delete files in a dir that is not mounted: kubelet removes only an empty one"},
    {"data-kept", "mountdevice mounts the existing filesystem: never format a device that has one"},
    {"teardown-succeeds",
     "unmount, unmountdevice and detach succeed on what the driver set up, in kubelet's order"},
    {"remount-after-restart",
     "after a node restart, set the volume up again from argv and the options alone (a "
     "repeated attach included)"},
    {"storage-ephemeral",
     "storage: ephemeral promises an empty volume per mount: clear it, or declare the "
     "storage the driver gives"},
    {"busy-unmount-fails",
     "an unmount that finds the mount busy answers Failure and leaves it mounted (no umount "
     "-l)"},
    {"refused-option-fails",
     "pass the backend's refusal on: an option it rejects is a Failure with its message"},
    {"metrics-statfs",
     "declare supportsMetrics only when statfs on the pod dir reports the volume"},
    {"init-side-effect-free",
     "init only reports capabilities: no mounts, files, daemons or backend calls"},
    {"expandfs-grows",
     "expandfs grows the filesystem (resize2fs, xfs_growfs) to the new size, or declare "
     "requiresFSResize:false"},
    {"resize-keeps-data", "grow the filesystem in place: never recreate or reformat it"},
    {"expandfs-idempotent", "expandfs of a filesystem already at the size is Success"},
    {"model-state",
     "each Success leaves the state kubelet expects (attached, mounted, unmounted), and "
     "nothing else"},
    {"attach-to-named-node",
     "attach to the node named in argv (the Node object's name), not the host the call runs "
     "on"},
    {"waitforattach-empty-device",
     "waitforattach \"\" finds the device from the options: kubelet passes \"\" after a "
     "restart"},
    {"warn", "kubelet tolerates it today; the warning says what to change"},
    {"harness", "a flexconform problem, not the driver's: rerun, or report it with --keep"},
    {"fixture",
     "the profile's fixture (setup, hook or teardown) failed: fix the command the message "
     "names"},
};

}  // namespace

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> out;
    for (const auto& r : kRules) out.push_back({r.id, r.hint});
    return out;
  }();
  return rules;
}

std::string RuleId(const std::string& rule) { return rule.substr(0, rule.find(": ")); }

std::string FixHint(const std::string& rule) {
  const std::string id = RuleId(rule);
  for (const auto& r : Rules()) {
    if (r.id == id) return r.hint;
  }
  return "";
}

std::string HarnessProblemRule(const std::string& harness_problem) {
  if (harness_problem.find("stdout/stderr open") != std::string::npos)
    return "F17 output-closed: kubelet reads combined output to end of file";
  if (harness_problem.find("output exceeded") != std::string::npos)
    return "F1/F2/F3 one-json-reply: combined output must be exactly one JSON document";
  return "F16 no-hang: kubelet has no timeout but waitforattach's; a hang wedges it";
}

}  // namespace flexkit::conform
