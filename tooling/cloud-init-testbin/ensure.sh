#!/usr/bin/env bash
# Unpacks cloud-init from Debian's package, without root, once, into a cache outside the repo,
# and prints the directory holding its `cloud-init` launcher as the last line on stdout
# (progress goes to stderr). The tests run `cloud-init schema --config-file FILE` from there on
# the user-data `nr cluster register --print-cloud-init` writes.
#
#   tooling/cloud-init-testbin/ensure.sh                   # unpack if needed, print bin dir
#   tooling/cloud-init-testbin/ensure.sh --print-versions  # JSON of the version used
#
# How: the version is the apt candidate of this machine's package lists (`apt-cache policy`);
# `apt-get download` fetches cloud-init and every python3-* package it depends on (recursively:
# the cache does not lean on the host's Python libraries), `dpkg-deb -x` unpacks each into
# <cache>/<version>-r<recipe>/root, and bin/cloud-init runs it with the host's /usr/bin/python3
# and PYTHONPATH pointing into root/. Nothing is installed on the machine. A cached directory is
# used only once its launcher has validated a small document. Without apt (another distribution)
# the newest cached directory that works is used; else it says what to do.
#
# Environment:
#   NODEKIT_CLOUD_INIT_TESTBIN_DIR  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/cloud-init-testbin)
set -euo pipefail

root=${NODEKIT_CLOUD_INIT_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/cloud-init-testbin}
# Bump when the unpacking or the launcher below changes, so existing caches are rebuilt.
recipe=1
python=/usr/bin/python3

log() { printf 'cloud-init-testbin: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

candidate() {
  command -v apt-cache >/dev/null 2>&1 || return 0
  LC_ALL=C apt-cache policy cloud-init 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" { print $2; exit }'
}
version=$(candidate)

if [[ ${1-} == --print-versions ]]; then
  printf '{"cloud-init":"%s"}\n' "${version:-unknown}"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

# works DIR: DIR/cloud-init runs and tells a valid document from an invalid one.
works() {
  [[ -x $1/cloud-init ]] || return 1
  local probe
  probe=$(mktemp -d)
  printf '#cloud-config\nruncmd: [[echo, ok]]\n' >"$probe/valid.yaml"
  printf '#cloud-config\nruncmd: 1\n' >"$probe/invalid.yaml"
  local ok=0
  "$1/cloud-init" schema --config-file "$probe/valid.yaml" >/dev/null 2>&1 || ok=1
  if "$1/cloud-init" schema --config-file "$probe/invalid.yaml" >/dev/null 2>&1; then ok=1; fi
  rm -rf "$probe"
  return $ok
}

if [[ -z $version ]]; then
  while IFS= read -r dir; do
    if works "$dir"; then echo "$dir"; exit 0; fi
  done < <(ls -dt "$root"/*-r"$recipe"/bin 2>/dev/null)
  die "no apt here to fetch Debian's cloud-init package and no working cache in $root. On Debian or Ubuntu run this script once (apt-get update first if apt-cache policy cloud-init shows no candidate), or install cloud-init and point NODEKIT_CLOUD_INIT_BIN_DIR at the directory holding its cloud-init."
fi

dir="$root/$version-r$recipe"
bin="$dir/bin"
if works "$bin"; then echo "$bin"; exit 0; fi

[[ -x $python ]] || die "$python not found: cloud-init runs on the host's Python 3"
command -v dpkg-deb >/dev/null 2>&1 || die "dpkg-deb not found (Debian's dpkg package)"
mkdir -p "$root"
# One builder at a time; a half-built directory is never used (it is built aside, then renamed).
if command -v flock >/dev/null; then exec 9>"$root/.lock" && flock 9; fi
if works "$bin"; then echo "$bin"; exit 0; fi

work=$(mktemp -d "$root/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mapfile -t packages < <(
  { echo cloud-init
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
      --no-replaces --no-enhances --no-pre-depends cloud-init 2>/dev/null |
      grep -E '^python3-[a-z0-9.+-]+$'; } | sort -u
)
log "downloading cloud-init $version and ${#packages[@]} packages (${packages[*]})…"
start=$SECONDS
(cd "$work" && apt-get download -q "${packages[@]}" >&2) ||
  die "apt-get download failed: run apt-get update (root) if the lists are old, then this script again"
mkdir -p "$work/build/root" "$work/build/bin"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/build/root"; done

cat >"$work/build/bin/cloud-init" <<EOF
#!/bin/sh
# cloud-init $version from Debian's packages, unpacked beside this file (tooling/cloud-init-testbin/ensure.sh).
PYTHONPATH="$dir/root/usr/lib/python3/dist-packages\${PYTHONPATH:+:\$PYTHONPATH}" exec $python -s "$dir/root/usr/bin/cloud-init" "\$@"
EOF
chmod 0755 "$work/build/bin/cloud-init"
rm -rf "$dir"
mv "$work/build" "$dir"
works "$bin" || die "the unpacked cloud-init in $dir does not run schema checks; see: $bin/cloud-init schema --help"
log "unpacked cloud-init $version in $((SECONDS - start))s"
echo "$bin"
