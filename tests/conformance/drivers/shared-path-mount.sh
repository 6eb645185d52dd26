#!/bin/sh
# A mount-only FlexVolume driver whose volumes are directories on a path
# every node shares, as an NFS export is: mount bind-mounts
# <root>/volumes/<volume> into the pod dir (read-only when asked), unmount
# unmounts it. The data lives on the shared path: nothing a node does to
# its own mounts touches another node's.
#
# The shared path is $SHARED_PATH_MOUNT_ROOT, else the case's scratch dir
# flexconform gives every driver ($FLEXCONFORM_CASE_DIR), else
# /var/lib/shared-path-mount. The name it runs under picks at most one
# defect (`shared-path-mount~DEFECT/DEFECT`, symlinks to this file);
# `clean` has none. Needs jq and base64.
defect=$(basename "$0")
root=${SHARED_PATH_MOUNT_ROOT:-}
[ -n "$root" ] || root=${FLEXCONFORM_CASE_DIR:+$FLEXCONFORM_CASE_DIR/shared-path-mount}
[ -n "$root" ] || root=/var/lib/shared-path-mount

ok() { printf '{"status":"Success"}\n'; exit 0; }
fail() { printf '{"status":"Failure","message":"%s"}\n' "$1"; exit 1; }
opt() { printf '%s' "$2" | jq -r --arg k "$1" '.[$k] // empty'; }

case "$1" in
  init) printf '{"status":"Success","capabilities":{"attach":false}}\n'; exit 0 ;;
  mount)
    dir=$2
    vol=$(opt kubernetes.io/pvOrVolumeName "$3")
    [ -n "$vol" ] || fail "no kubernetes.io/pvOrVolumeName in the options"
    for secret in $(printf '%s' "$3" | jq -r 'to_entries[] | select(.key | startswith("kubernetes.io/secret/")) | .value'); do
      printf '%s' "$secret" | base64 -d >/dev/null 2>&1 || fail "a secret in the options is not base64"
    done
    mountpoint -q "$dir" && ok
    src="$root/volumes/$vol"
    mkdir -p "$src" 2>/dev/null || fail "cannot create $src on the shared path"
    if [ "$defect" = wipe-on-first-sight ]; then
      # "Initialises" a volume the first time this node mounts it.
      seen="$root/seen/$(printf '%s' "${dir%%/pods/*}" | md5sum | cut -c1-16)"
      if [ ! -e "$seen/$vol" ]; then
        find "$src" -mindepth 1 -delete 2>/dev/null
        mkdir -p "$seen" 2>/dev/null && : >"$seen/$vol"
      fi
    fi
    mkdir -p "$dir" 2>/dev/null || fail "cannot create $dir"
    mount --bind "$src" "$dir" >/dev/null 2>&1 || fail "bind $src on $dir"
    if [ "$(opt kubernetes.io/readwrite "$3")" = ro ]; then
      mount -o remount,bind,ro "$dir" >/dev/null 2>&1 || fail "remount $dir read-only"
    fi
    ok ;;
  unmount)
    dir=$2
    if mountpoint -q "$dir"; then umount "$dir" >/dev/null 2>&1 || fail "umount $dir"; ok; fi
    if [ "$defect" = unmount-deletes-stale ]; then
      # Takes a pod dir that is no longer mounted (a node back from a
      # crash) for a volume to clean up, and cleans it on the shared path.
      find "$root/volumes/$(basename "$dir")" -mindepth 1 -delete 2>/dev/null
    fi
    ok ;;
  *) printf '{"status":"Not supported"}\n'; exit 0 ;;
esac
