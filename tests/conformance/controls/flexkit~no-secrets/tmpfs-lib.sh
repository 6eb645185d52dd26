# Sourced by no-secrets: a tmpfs per pod dir, read-only when asked.
ok() { printf '{"status":"Success"}\n'; exit 0; }
fail() { printf '{"status":"Failure","message":"%s"}\n' "$1"; exit 1; }
main() {
  case "$1" in
    init) printf '{"status":"Success","capabilities":{"attach":false}}\n'; exit 0 ;;
    mount)
      mountpoint -q "$2" && ok
      [ -d "$2" ] || mkdir -p -- "$2" 2>/dev/null || fail "cannot create the pod dir"
      flags=size=16m
      case "$3" in *'"kubernetes.io/readwrite":"ro"'*) flags="$flags,ro" ;; esac
      mount -t tmpfs -o "$flags" flexkit-ctl "$2" >/dev/null 2>&1 || fail "mount tmpfs failed"
      ok ;;
    unmount)
      if mountpoint -q "$2"; then umount "$2" >/dev/null 2>&1 || fail "umount failed"; fi
      ok ;;
    *) printf '{"status":"Not supported"}\n'; exit 0 ;;
  esac
}
