# shellcheck shell=bash
# What the testbins built from pinned Go modules share (tooling/k8s-testbin/ensure.sh and
# tooling/registry-testbin/ensure.sh). It sits here because k8s-testbin ships in @nodekit/testing,
# this file with it. Sourced with `testbin` (the name its messages start with) and `here` (the
# sourcing script's directory) set; lock_bin and build fill `bin`, and build names `gover`.

sha() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi | cut -c1-12; }
log() { printf '%s: %s\n' "$testbin" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# modver DIR MODULE: the version DIR/go.mod requires of MODULE.
modver() {
  awk -v m="$2" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' "$here/$1/go.mod"
}

# lock_bin: makes $bin and holds its cache dir's lock (one builder per cache dir); a temp file
# found while holding it is left from a killed run. This run's temp files go when it exits.
lock_bin() {
  mkdir -p "$bin"
  if command -v flock >/dev/null; then exec 9>"$bin/../.lock" && flock 9 && rm -f "$bin"/.*.tmp.*; fi
  trap 'rm -f "$bin"/.*.tmp.$$' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# build NAME VERSION DIR PACKAGE LDFLAGS: go build into a temp name, then rename into place
# (NODEKIT_TESTBIN_MEASURE=1 wraps it in `/usr/bin/time -v`).
build() {
  local start=$SECONDS tmp="$bin/.$1.tmp.$$" measure=()
  [[ -x $bin/$1 ]] && return 0
  [[ ${NODEKIT_TESTBIN_MEASURE-} == 1 ]] && measure=(/usr/bin/time -v)
  log "building $1 $2 with $gover…"
  (cd "$here/$3" && ${measure[@]+"${measure[@]}"} go build -mod=readonly -trimpath -ldflags "-s -w $5" -o "$tmp" "$4")
  mv -f "$tmp" "$bin/$1"
  log "built $1 in $((SECONDS - start))s"
}
