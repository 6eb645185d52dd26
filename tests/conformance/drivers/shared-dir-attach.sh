#!/bin/sh
# An attachable FlexVolume driver whose "cloud" is a directory every node
# shares, the simplest backend a new driver has: a volume is a sparse file
# there, attach makes a loop device for it and records "<node> <device>" in
# attachments/<volume> (one owner at a time, under flock), mountdevice
# formats it once and mounts it, mount bind-mounts the global path into the
# pod dir. A volume attached to another node is never taken: attach is
# refused until detach names that node (kubelet's own, or the controller's
# force-detach of a node that died), as a cloud refuses a live attachment.
#
# The cloud is $SHARED_DIR_ATTACH_ROOT, else the case's scratch dir
# flexconform gives every driver ($FLEXCONFORM_CASE_DIR), else
# /var/lib/shared-dir-attach. The name it runs under picks at most one
# defect (`shared-dir-attach~DEFECT/DEFECT`, symlinks to this file);
# `clean` has none. Needs jq, losetup, flock, blkid, mkfs.
# kube-controller-manager runs attach, detach and isattached with no tools
# on its PATH (flexconform too: cluster-facts §2); this driver's "cloud
# API" is the host's own tools, so it names where they live, as a driver
# that ships its own binaries would.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
defect=$(basename "$0")
root=${SHARED_DIR_ATTACH_ROOT:-}
[ -n "$root" ] || root=${FLEXCONFORM_CASE_DIR:+$FLEXCONFORM_CASE_DIR/shared-dir-attach}
[ -n "$root" ] || root=/var/lib/shared-dir-attach

ok() { printf '{"status":"Success"}\n'; exit 0; }
device() { printf '{"status":"Success","device":"%s"}\n' "$1"; exit 0; }
fail() { printf '{"status":"Failure","message":"%s"}\n' "$1"; exit 1; }
opt() { printf '%s' "$2" | jq -r --arg k "$1" '.[$k] // empty'; }
lock() {
  mkdir -p "$root/volumes" "$root/attachments" 2>/dev/null || fail "cannot create the cloud dir $root"
  exec 9>"$root/.lock" && flock 9 || fail "cannot lock $root/.lock"
}
# Whether loop device $1 is backed by file $2 now.
backs() {
  [ -n "$1" ] || return 1
  b=$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null) || return 1
  [ "$b" = "$(realpath "$2")" ]
}
# The attachment record of $1: sets owner and dev ("" when none).
record() {
  owner= dev=
  [ -e "$root/attachments/$1" ] && read -r owner dev <"$root/attachments/$1"
}
release() {  # volume: the loop device goes, then the record
  record "$1"
  if [ "$defect" != detach-keeps-loop ] && backs "$dev" "$root/volumes/$1.img"; then
    losetup -d "$dev" 2>/dev/null || fail "losetup -d $dev for $1"
  fi
  rm -f "$root/attachments/$1"
}

case "$1" in
  # A volume's size is fixed (nothing grows the file), so no node expansion.
  init) printf '{"status":"Success","capabilities":{"attach":true,"requiresFSResize":false}}\n'; exit 0 ;;
  getvolumename)
    vol=$(opt kubernetes.io/pvOrVolumeName "$2")
    [ -n "$vol" ] || fail "no kubernetes.io/pvOrVolumeName in the options"
    printf '{"status":"Success","volumeName":"%s"}\n' "$vol"; exit 0 ;;
  attach)
    vol=$(opt kubernetes.io/pvOrVolumeName "$2") node=$3
    [ -n "$vol" ] && [ -n "$node" ] || fail "attach needs a volume name and a node"
    lock
    img="$root/volumes/$vol.img"
    [ -e "$img" ] || truncate -s "$(opt size "$2" | grep . || echo 320M)" "$img" 2>/dev/null ||
      fail "cannot create $img"
    record "$vol"
    if [ -n "$owner" ] && [ "$owner" != "$node" ]; then
      # Taking over a live attachment: the other node may still write to it.
      if [ "$defect" = attach-steals ]; then release "$vol"; else
        fail "volume $vol is attached to $owner; it can attach to $node once detached there"
      fi
    fi
    record "$vol"
    backs "$dev" "$img" && device "$dev"
    dev=$(losetup -f --show "$img" 2>/dev/null) || fail "losetup $img"
    printf '%s %s\n' "$node" "$dev" >"$root/attachments/$vol.tmp" &&
      mv "$root/attachments/$vol.tmp" "$root/attachments/$vol" || fail "record the attachment of $vol"
    # A debug line on the attach that made the device: kubelet cannot decode
    # it, and the retry (the device already there) answers cleanly.
    [ "$defect" = chatty-first-attach ] && echo "debug: attached $vol at $dev"
    device "$dev" ;;
  waitforattach)
    [ -b "$2" ] && device "$2"
    vol=$(opt kubernetes.io/pvOrVolumeName "$3")
    record "$vol"
    [ -n "$dev" ] && [ -b "$dev" ] && device "$dev"
    fail "volume $vol has no device on this node" ;;
  isattached)
    vol=$(opt kubernetes.io/pvOrVolumeName "$2") node=$3
    record "$vol"
    attached=false
    if backs "$dev" "$root/volumes/$vol.img"; then
      if [ "$owner" = "$node" ] || [ "$defect" = isattached-any-node ]; then attached=true; fi
    fi
    printf '{"status":"Success","attached":%s}\n' "$attached"; exit 0 ;;
  detach)
    vol=$2 node=$3
    lock
    record "$vol"
    # Another node's attachment is not this detach's to release.
    if [ -n "$owner" ] && { [ "$owner" = "$node" ] || [ "$defect" = detach-any-node ]; }; then
      release "$vol"
    fi
    ok ;;
  mountdevice)
    path=$2 dev=$3
    mountpoint -q "$path" && ok
    [ -b "$dev" ] || fail "$dev is not a block device"
    fs=$(opt kubernetes.io/fsType "$4"); fs=${fs:-ext4}
    have=$(blkid -p -o value -s TYPE "$dev" 2>/dev/null)
    if [ -z "$have" ]; then
      mkfs -t "$fs" -q "$dev" >/dev/null 2>&1 || fail "mkfs -t $fs $dev"
    elif [ "$have" != "$fs" ]; then
      fail "$dev holds $have, not the $fs asked for; it is never reformatted"
    fi
    ro=; [ "$(opt kubernetes.io/readwrite "$4")" = ro ] && ro="-o ro"
    mkdir -p "$path" 2>/dev/null || fail "cannot create $path"
    # shellcheck disable=SC2086
    mount $ro "$dev" "$path" >/dev/null 2>&1 || fail "mount $dev on $path"
    ok ;;
  unmountdevice)
    if mountpoint -q "$2"; then umount "$2" >/dev/null 2>&1 || fail "umount $2"; fi
    ok ;;
  mount)
    dir=$2
    mountpoint -q "$dir" && ok
    root_dir=${dir%%/pods/*}
    plugin=$(basename "$(dirname "$dir")" | tr '~' '/')
    global="$root_dir/plugins/kubernetes.io/flexvolume/$plugin/mounts/$(basename "$dir")"
    mountpoint -q "$global" || fail "the device of $dir is not mounted at $global"
    mkdir -p "$dir" 2>/dev/null || fail "cannot create $dir"
    mount --bind "$global" "$dir" >/dev/null 2>&1 || fail "bind $dir"
    if [ "$(opt kubernetes.io/readwrite "$3")" = ro ]; then
      mount -o remount,bind,ro "$dir" >/dev/null 2>&1 || fail "remount $dir read-only"
    fi
    ok ;;
  unmount)
    if mountpoint -q "$2"; then umount "$2" >/dev/null 2>&1 || fail "umount $2"; fi
    ok ;;
  *) printf '{"status":"Not supported"}\n'; exit 0 ;;
esac
