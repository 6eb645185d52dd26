#!/bin/sh
# A correct mount-only FlexVolume driver (a tmpfs per pod volume, read-only
# when asked, of the `size` option's size, secrets base64-decoded, the free-
# text option `share` echoed in its reply, fsGroup applied by the driver under
# either key spelling, as its init says fsGroup:false) with at most one defect, named by the
# name it runs under: each mutant is `mutant~DEFECT/DEFECT`, a symlink to
# this file (a copy keeps working: the name, not the folder, picks the
# defect); `none` is the known-good control. Needs jq and base64.
defect=$(basename "$0")

ok() { printf '{"status":"Success"}\n'; exit 0; }
fail() {
  if [ "$defect" = failed-status ]; then printf '{"status":"Failed","message":"%s"}\n' "$1"; exit 1; fi
  if [ "$defect" = failure-exit0 ]; then printf '{"status":"Failure","message":"%s"}\n' "$1"; exit 0; fi
  # Messages carry paths and values: jq escapes them.
  jq -cn --arg m "$1" '{status: "Failure", message: $m}'
  [ "$defect" = failure-two-documents ] && printf '{"status":"Failure"}\n'
  exit 1
}
not_supported() {
  if [ "$defect" = unknown-verb-failure ]; then fail "unknown verb"; fi
  printf '{"status":"Not supported"}\n'
  if [ "$defect" = not-supported-exit1 ]; then exit 1; fi
  exit 0
}
is_mounted() {
  if [ "$defect" = prefix-match ]; then grep -q " $1" /proc/self/mounts; return; fi
  mountpoint -q "$1"
}

if [ "$defect" = unquoted-args ]; then
  # shellcheck disable=SC2048,SC2086
  set -- $*
fi

case "$1" in
  init)
    case "$defect" in
      echo-ne) echo -ne '{"status":"Success","capabilities":{"attach":false,"fsGroup":false}}\n' ;;
      caps-as-strings) printf '{"status":"Success","capabilities":{"attach":"false","fsGroup":"false"}}\n' ;;
      wrong-capabilities) printf '{"status":"Success","capabilities":{"attach":true,"fsGroup":false}}\n' ;;
      capitalised-keys) printf '{"Status":"Success","Capabilities":{"attach":false,"fsGroup":false}}\n' ;;
      init-slow) sleep 2.2; printf '{"status":"Success","capabilities":{"attach":false,"fsGroup":false}}\n' ;;
      *) printf '{"status":"Success","capabilities":{"attach":false,"fsGroup":false}}\n' ;;
    esac
    exit 0 ;;
  getvolumename) not_supported ;;
  mount)
    dir=$2 json=$3
    # One jq for every option (each jq start costs more than the rest of
    # the call): shell-quoted assignments, then the secrets as
    # "key value" pairs in the positional parameters.
    options=$(printf '%s' "$json" | jq -r '
      "share=" + (.share // "" | tostring | @sh),
      "size=" + (.size // "" | tostring | @sh),
      "readwrite=" + (.["kubernetes.io/readwrite"] // "" | tostring | @sh),
      "group=" + (.["kubernetes.io/fsGroup"] // "" | tostring | @sh),
      "legacy_group=" + (.["kubernetes.io/mounterArgs.FsGroup"] // "" | tostring | @sh),
      "set -- " + ([to_entries[] | select(.key | startswith("kubernetes.io/secret/"))
                    | .key, (.value | tostring)] | @sh)' 2>/dev/null) &&
      [ -n "$json" ] || fail "options are not JSON"
    eval "$options"
    # Every option as a shell variable, values pasted in (a common pattern).
    if [ "$defect" = options-eval-all ]; then
      eval "$(printf '%s' "$json" | jq -r 'to_entries[] | select(.key | test("^[A-Za-z_][A-Za-z0-9_]*$"))
        | "opt_" + .key + "=\"" + (.value | tostring) + "\""')"
    fi
    message=""
    [ -n "$share" ] && message="share $share"
    [ "$defect" = option-eval ] && eval "label=\"$share\""
    while [ $# -ge 2 ]; do
      key=$1 value=$2
      shift 2
      if [ "$defect" != secret-invalid-accepted ]; then
        decoded=$(printf '%s' "$value" | base64 -d 2>/dev/null) || fail "secret ${key#kubernetes.io/secret/} is not base64"
      else
        decoded=$(printf '%s' "$value" | base64 -d 2>/dev/null)
      fi
      [ "$defect" = secret-echoed ] && message="using secret $decoded"
      [ "$defect" = secret-eval ] && eval "password=\"$decoded\""
      # Only the secret it reads, as a shell variable.
      [ "$defect" = secret-eval-declared ] && [ "$key" = kubernetes.io/secret/password ] &&
        eval "password=\"$decoded\""
      # The secret as kubelet sent it (base64) handed to the mount.
      [ "$defect" = secret-undecoded ] && source="flexkit-mutant:$value"
      # The secret as kubelet sent it (base64) in the mount helper's environment.
      [ "$defect" = secret-undecoded-in-helper-env ] && helper_env="PASSWD=$value"
      # The secret pasted into -o unescaped: a comma in it adds options.
      [ "$defect" = secret-spliced-into-options ] && extra_options="$extra_options,x-flexkit-${key##*/}=$decoded"
      # A credentials file under a random name, which unmount never removes.
      [ "$defect" = credentials-file-left ] &&
        printf '%s=%s\n' "${key#kubernetes.io/secret/}" "$decoded" >>"${creds:=$(mktemp /tmp/flexkit-mutant-creds.XXXXXX)}"
    done
    if [ "$defect" != mount-not-idempotent ] && is_mounted "$dir"; then
      # "ensure mounted" that also "fixes" the options: a read-only mount turns read-write.
      [ "$defect" = ro-lost-on-remount ] && mount -o remount,rw "$dir" >/dev/null 2>&1
      # "Already mounted: nothing to do" and no reply.
      [ "$defect" = empty-output ] && exit 0
      ok
    fi
    [ "$defect" = invalid-option-accepted ] && size=""
    # The free-text option pasted into -o unescaped.
    [ "$defect" = option-spliced-into-options ] && [ -n "$share" ] && extra_options=",x-flexkit-share=$share"
    flags=size=${size:-16m}$extra_options
    if [ "$readwrite" = ro ] && [ "$defect" != ro-ignored ]; then flags="$flags,ro"; fi
    [ "$defect" != fsgroup-legacy-key-only ] && [ -z "$group" ] && group=$legacy_group
    if [ -n "$group" ]; then
      case "$group" in *[!0-9]*) fail "fsGroup is not a number" ;; esac
      flags="$flags,gid=$group,mode=2775"
    fi
    case "$defect" in
      mount-errors-ignored) mkdir -p "$dir" 2>/dev/null; mount -t tmpfs -o "$flags" flexkit-mutant "$dir" >/dev/null 2>&1 ;;
      mount-error-unredirected)
        mkdir -p "$dir" || fail "mkdir $dir"
        mount -t tmpfs -o "$flags" flexkit-mutant "$dir" || fail "mount tmpfs on $dir" ;;
      *)
        mkdir -p "$dir" 2>/dev/null || fail "mkdir $dir"
        env ${helper_env:+"$helper_env"} mount -t tmpfs -o "$flags" "${source:-flexkit-mutant}" "$dir" >/dev/null 2>&1 || fail "mount tmpfs on $dir" ;;
    esac
    [ "$defect" = stderr-log ] && echo "mounted tmpfs on $dir" >&2
    # The volume's state kept in a scratch place, which unmount never removes.
    [ "$defect" = scratch-file-left ] && : >"/run/flexkit-mutant-$(basename "$dir").state"
    [ "$defect" = leaked-child ] && sleep 300 &
    [ "$defect" = leaked-daemon ] && (sleep 300 >/dev/null 2>&1 </dev/null &)
    if [ -n "$message" ]; then
      # message-unescaped: printf puts the text in as it is.
      case "$defect" in
        message-unescaped) printf '{"status":"Success","message":"%s"}\n' "$message" ;;
        *) jq -cn --arg m "$message" '{status: "Success", message: $m}' ;;
      esac
      exit 0
    fi
    ok ;;
  unmount)
    dir=$2
    if [ ! -d "$dir" ]; then
      [ "$defect" = hang-on-missing-dir ] && sleep 300
      [ "$defect" = unmount-not-idempotent ] && fail "umount $dir: no such directory"
      ok
    fi
    if [ "$defect" = unmount-not-idempotent ]; then umount "$dir" >/dev/null 2>&1 || fail "umount $dir failed"; ok; fi
    if [ "$defect" = success-exit1 ] && ! is_mounted "$dir"; then
      # The reply first, then umount's status (32: not mounted) as the exit code.
      printf '{"status":"Success"}\n'; umount "$dir" >/dev/null 2>&1; exit
    fi
    if is_mounted "$dir"; then
      [ "$defect" = unmount-leaves-mount ] && ok
      # A busy mount: umount fails (EBUSY), the reply says so; unmount-lazy
      # detaches it anyway.
      if [ "$defect" = unmount-lazy ]; then umount -l "$dir" >/dev/null 2>&1 || fail "umount $dir failed"; ok; fi
      umount "$dir" >/dev/null 2>&1 || fail "umount $dir failed"
    elif [ "$defect" = unmount-empties-dir ]; then
      # "Nothing mounted: empty the pod dir, so kubelet's rmdir works".
      find "$dir" -mindepth 1 -delete
    fi
    if [ "$defect" = unmount-all-pods ]; then
      # State kept per volume name, not per dir: every pod's mount of it goes.
      name=$(basename "$dir")
      awk -v n="/$name" '$1 == "flexkit-mutant" && substr($2, length($2) - length(n) + 1) == n { print $2 }' \
        /proc/self/mounts | while read -r other; do umount "$other" >/dev/null 2>&1; done
    fi
    ok ;;
  install)
    # `install PLUGIN_DIR`: the driver's own installer (not a kubelet verb).
    folder=$(basename "$(dirname "$0")")
    dest="$2/$folder/$defect"
    mkdir -p "$2/$folder" || exit 1
    if [ "$defect" = install-in-place ]; then
      # Writes the watched name directly; the pause stands for a big binary
      # on a slow disk, so a probe sees the half-written file.
      { head -c 512 "$0"; sleep 0.3; tail -c +513 "$0"; } > "$dest" && chmod 755 "$dest"
      exit
    fi
    cp "$0" "$2/$folder/.$defect.installing" && chmod 755 "$2/$folder/.$defect.installing" &&
      mv -f "$2/$folder/.$defect.installing" "$dest"
    exit ;;
  *)
    not_supported ;;
esac
