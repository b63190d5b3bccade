#!/usr/bin/env bash
# Flux's CRDs (source-controller's and kustomize-controller's), from the Go modules the module
# proxy serves, once, into a cache outside the repo; prints the cache directory as the last line
# on stdout (progress goes to stderr). The tests install the CRDs from <dir>/crds and validate
# what `nvkectl install --emit flux` writes against them with a server-side dry run.
#
#   tooling/flux-testbin/ensure.sh                   # download if needed, print the directory
#   tooling/flux-testbin/ensure.sh --print-versions  # JSON of the versions used
#
# How: `go mod download` fetches each controller's module (its source only, not its
# dependencies: nothing is built), and its config/crd/bases/*.yaml are copied into
# <cache>/crds, built aside and renamed into place, with a SHA256SUMS that is checked before
# every use: a cache whose files do not match is dropped and fetched again.
# v1.9.6 is the newest release of both controllers this machine's Go (1.26) accepts: the
# v1.10 modules need Go >= 1.27 (`go mod download` refuses them with GOTOOLCHAIN=local).
#
# Environment:
#   NODEKIT_FLUX_TESTBIN_DIR  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit)
set -euo pipefail

version=v1.9.6
modules=(github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller)
root=${NODEKIT_FLUX_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit}
dir="$root/flux-$version"

log() { printf 'flux-testbin: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ${1-} == --print-versions ]]; then
  printf '{"source-controller":"%s","kustomize-controller":"%s"}\n' "$version" "$version"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

# valid DIR: every CRD file is there and matches the SHA256SUMS written with it.
valid() {
  [[ -f $1/crds/SHA256SUMS ]] || return 1
  (cd "$1/crds" && sha256sum --quiet --check SHA256SUMS >/dev/null 2>&1) || return 1
  [[ $(wc -l <"$1/crds/SHA256SUMS") -ge 7 ]]
}

if valid "$dir"; then echo "$dir"; exit 0; fi

command -v go >/dev/null 2>&1 || die "go not found: install Go (>= 1.24) to fetch Flux's modules, or set NODEKIT_FLUX_BIN_DIR to a directory holding crds/ (Flux's CRD files)"
mkdir -p "$root"
if command -v flock >/dev/null; then exec 9>"$root/.flux-$version.lock" && flock 9; fi
if valid "$dir"; then echo "$dir"; exit 0; fi

work=$(mktemp -d "$root/.flux-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/crds"
for module in "${modules[@]}"; do
  log "go mod download $module@$version"
  src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n $src && -d $src/config/crd/bases ]] || die "go mod download $module@$version gave no config/crd/bases (is the module proxy reachable? GOPROXY=$(go env GOPROXY))"
  cp "$src"/config/crd/bases/*.yaml "$work/crds/"
done
chmod -R u+w "$work/crds"
(cd "$work/crds" && sha256sum -- *.yaml >SHA256SUMS)
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
chmod 0755 "$dir"
valid "$dir" || die "the cache $dir does not check after writing it"
log "Flux $version CRDs in $dir/crds"
echo "$dir"
