#!/bin/sh
# A correct mount-only FlexVolume driver for the [resize], [metrics] and
# [selinux] cases: a tmpfs per pod volume sized by the `size` option
# (default 64m), read-only when asked, grown in place by expandfs. It runs
# with at most one defect, named by the name it runs under: each mutant is
# `resize~DEFECT/DEFECT`, a symlink to this file; `none` is the control.
# Needs jq.
defect=$(basename "$0")

ok() { printf '{"status":"Success"}\n'; exit 0; }
fail() { printf '{"status":"Failure","message":"%s"}\n' "$1"; exit 1; }
opt() { printf '%s' "$2" | jq -r --arg k "$1" '.[$k] // empty'; }
# pods/UID/volumes/vendor~driver/NAME -> pods/UID/node-disk-data/NAME
node_disk_data() { printf '%s/node-disk-data/%s' "${1%/volumes/*}" "$(basename "$1")"; }

# A log kept in the driver's own folder: kubelet's prober sees every line.
if [ "$defect" = logs-in-plugin-dir ] && [ "$1" != init ]; then
  echo "$(date +%s) $1" >> "$(dirname "$0")/calls.log"
fi

case "$1" in
  init)
    # ramfs holds no security labels and reports no capacity: it says so
    # for metrics and resize, but not for SELinux relabelling.
    if [ "$defect" = ramfs ]; then
      printf '{"status":"Success","capabilities":{"attach":false,"supportsMetrics":false,"requiresFSResize":false}}\n'
    elif [ "$defect" = node-disk-dir ]; then
      printf '{"status":"Success","capabilities":{"attach":false,"supportsMetrics":true,"requiresFSResize":false}}\n'
    else
      printf '{"status":"Success","capabilities":{"attach":false,"supportsMetrics":true}}\n'
    fi
    exit 0 ;;
  mount)
    dir=$2
    mountpoint -q "$dir" && ok
    size=$(opt size "$3"); [ -n "$size" ] || size=64m
    mode=rw; [ "$(opt kubernetes.io/readwrite "$3")" = ro ] && mode=ro
    [ "$defect" = metrics-ignores-size ] && size=1m
    mkdir -p "$dir" || fail "mount: mkdir $dir"
    # Not a defect: the volume is a directory on the node's own disk (in
    # the pod's kubelet dir, so on the filesystem under the pod dir),
    # bind-mounted at the pod dir, so statfs there reports its storage.
    if [ "$defect" = node-disk-dir ]; then
      data=$(node_disk_data "$dir")
      mkdir -p "$data" && mount --bind "$data" "$dir" 2>/dev/null || fail "bind $data on $dir"
      [ "$mode" = ro ] && { mount -o remount,bind,ro "$dir" 2>/dev/null || fail "remount ro $dir"; }
      ok
    fi
    if [ "$defect" = ramfs ]; then
      mount -t ramfs -o "$mode" resize-driver "$dir" 2>/dev/null || fail "mount ramfs on $dir"
      ok
    fi
    mount -t tmpfs -o "$mode,size=$size,nosuid,nodev" resize-driver "$dir" 2>/dev/null ||
      fail "mount tmpfs on $dir"
    ok ;;
  unmount)
    dir=$2
    [ -d "$dir" ] || ok
    while mountpoint -q "$dir"; do umount "$dir" 2>/dev/null || fail "umount $dir"; done
    # Like an emptyDir, a node-disk-dir volume lives as long as its pod.
    if [ "$defect" = node-disk-dir ]; then
      rm -rf "$(node_disk_data "$dir")"
      rmdir "$(dirname "$(node_disk_data "$dir")")" 2>/dev/null
    fi
    ok ;;
  expandfs)
    # expandfs <json> <devicePath> <podVolumeDir> <newBytes> <oldBytes>
    dir=$4 new=$5
    mountpoint -q "$dir" || fail "expandfs: nothing is mounted at $dir"
    [ "$defect" = expandfs-no-grow ] && ok
    mount -o "remount,size=$new" "$dir" 2>/dev/null || fail "expandfs: remount $dir with size $new"
    ok ;;
  *) printf '{"status":"Not supported"}\n'; exit 0 ;;
esac
