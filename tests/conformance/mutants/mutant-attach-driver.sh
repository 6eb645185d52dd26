#!/bin/sh
# A correct attachable FlexVolume driver for the [sequence] mutants: attach
# records the attachment in a state file ($FLEXKIT_MUTANT_STATE/<node>/
# <volume>; profile-attach.yaml puts it in the case dir, so parallel runs
# never share it), mountdevice mounts a tmpfs at the
# global path, mount bind-mounts it into the pod dir (read-only when asked).
# Like mutant-driver.sh, the name it runs under picks at most one defect
# (`mutant~attach-DEFECT/attach-DEFECT`, symlinks to this file);
# `attach-none` is the control. Needs jq.
defect=$(basename "$0")
# With no state dir given (--driver alone), one under /run that all cases
# share: their volume names differ, and it is never removed.
state=${FLEXKIT_MUTANT_STATE:-/run/flexkit-mutant-attach}

ok() { printf '{"status":"Success"}\n'; exit 0; }
fail() { jq -cn --arg m "$1" '{status: "Failure", message: $m}'; exit 1; }
opt() { printf '%s' "$2" | jq -r --arg k "$1" '.[$k] // empty'; }
# The global (device) mount path of a pod dir's volume (protocol §6).
global_of() {
  root=${1%%/pods/*}
  plugin=$(basename "$(dirname "$1")" | tr '~' '/')
  printf '%s/plugins/kubernetes.io/flexvolume/%s/mounts/%s' "$root" "$plugin" "$(basename "$1")"
}

case "$1" in
  init) printf '{"status":"Success","capabilities":{"attach":true}}\n'; exit 0 ;;
  attach)
    vol=$(opt kubernetes.io/pvOrVolumeName "$2")
    [ -n "$vol" ] && [ -n "$3" ] || fail "attach needs a volume name and a node"
    { mkdir -p "$state/$3" && : >"$state/$3/$vol"; } 2>/dev/null || fail "record the attachment of $vol"
    device="flexkit-mutant:$vol"
    # A repeated attach answers a device of its own (kubelet expects the same one).
    [ "$defect" = attach-new-device ] && device="$device:$(date +%s%N)"
    printf '{"status":"Success","device":"%s"}\n' "$device"; exit 0 ;;
  waitforattach)
    printf '{"status":"Success","device":"%s"}\n' "$2"; exit 0 ;;
  isattached)
    vol=$(opt kubernetes.io/pvOrVolumeName "$2")
    if [ -e "$state/$3/$vol" ]; then attached=true; else attached=false; fi
    printf '{"status":"Success","attached":%s}\n' "$attached"; exit 0 ;;
  detach)
    rm -f "$state/$3/$2"
    [ -n "${FLEXKIT_MUTANT_STATE:-}" ] && rmdir "$state/$3" "$state" 2>/dev/null
    ok ;;
  mountdevice)
    mountpoint -q "$2" && ok
    flags=size=16m
    # The device is mounted read-only when asked (attach-ro-global-rw leaves
    # that to mount's read-only bind, which hides it in the pod dir).
    [ "$(opt kubernetes.io/readwrite "$4")" = ro ] && [ "$defect" != attach-ro-global-rw ] && flags="$flags,ro"
    # attach-mountdevice-noop: Success, and nothing mounted.
    [ "$defect" = attach-mountdevice-noop ] && ok
    mkdir -p "$2" 2>/dev/null && mount -t tmpfs -o "$flags" flexkit-mutant "$2" >/dev/null 2>&1 || fail "mount $2"
    ok ;;
  unmountdevice)
    if mountpoint -q "$2"; then umount "$2" >/dev/null 2>&1 || fail "umount $2"; fi
    ok ;;
  mount)
    dir=$2 global=$(global_of "$2")
    mountpoint -q "$dir" && ok
    mountpoint -q "$global" || fail "the device of $dir is not mounted at $global"
    mkdir -p "$dir" && mount --bind "$global" "$dir" >/dev/null 2>&1 || fail "bind $dir"
    if [ "$(opt kubernetes.io/readwrite "$3")" = ro ]; then
      mount -o remount,bind,ro "$dir" >/dev/null 2>&1 || fail "remount $dir read-only"
    fi
    ok ;;
  unmount)
    dir=$2
    if mountpoint -q "$dir"; then umount "$dir" >/dev/null 2>&1 || fail "umount $dir"; ok; fi
    if [ "$defect" = attach-unmount-needs-device ]; then
        # Looks up the device through the global mount even when there is
      # nothing to unmount: fails while the volume is attached but its
      # device is no longer mounted (e.g. a repeated unmount after unmountdevice).
      if ls "$state"/*/"$(basename "$dir")" >/dev/null 2>&1 && ! mountpoint -q "$(global_of "$dir")"; then
        fail "cannot find the device of $dir"
      fi
    fi
    ok ;;
  *) printf '{"status":"Not supported"}\n'; exit 0 ;;
esac
