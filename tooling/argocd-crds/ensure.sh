#!/usr/bin/env bash
# Argo CD's Application and AppProject CRDs, taken once from the Go module the module proxy
# serves (github.com/argoproj/argo-cd/v3, its manifests/crds/), into a cache outside the repo;
# prints the cache directory as the last line on stdout (progress goes to stderr). Only the two
# CRD files are kept, never the module. The directory holds:
#   crds/application-crd.yaml, crds/appproject-crd.yaml   as the module carries them
#   SHA256SUMS                                            of both, checked before every use
#
#   tooling/argocd-crds/ensure.sh                   # fetch if needed, print the directory
#   tooling/argocd-crds/ensure.sh --print-versions  # JSON of the version used
#
# `go mod download` checks the module's zip against the checksum database (go.sum's h1: hash)
# before it unpacks it; the copies here are checked against SHA256SUMS each time.
#
# Environment:
#   NODEKIT_ARGOCD_CRDS_DIR  a directory holding the two CRDs and SHA256SUMS: checked and printed, nothing fetched
#   NODEKIT_ARGOCD_CRDS_ROOT cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit)
set -euo pipefail

version=v3.1.8
module=github.com/argoproj/argo-cd/v3
files=(application-crd.yaml appproject-crd.yaml)
root=${NODEKIT_ARGOCD_CRDS_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit}

log() { printf 'argocd-crds: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ${1-} == --print-versions ]]; then
  printf '{"argo-cd":"%s"}\n' "$version"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

# valid DIR: both CRDs are there and match the SHA256SUMS written with them.
valid() {
  [[ -f $1/SHA256SUMS ]] || return 1
  local f
  for f in "${files[@]}"; do grep -q " crds/$f\$" "$1/SHA256SUMS" || return 1; done
  (cd "$1" && sha256sum --quiet --check SHA256SUMS >/dev/null 2>&1)
}

if [[ -n ${NODEKIT_ARGOCD_CRDS_DIR-} ]]; then
  valid "$NODEKIT_ARGOCD_CRDS_DIR" || die "NODEKIT_ARGOCD_CRDS_DIR=$NODEKIT_ARGOCD_CRDS_DIR does not hold crds/ with ${files[*]} matching its SHA256SUMS"
  echo "$NODEKIT_ARGOCD_CRDS_DIR"
  exit 0
fi

# Bump when the layout below changes, so existing caches are rewritten.
recipe=1
dir="$root/argocd-crds-$version-r$recipe"
if valid "$dir"; then echo "$dir"; exit 0; fi

command -v go >/dev/null 2>&1 || die "go not found: install Go to fetch Argo CD's CRDs from its module, or set NODEKIT_ARGOCD_CRDS_DIR to a directory holding crds/ with ${files[*]} and their SHA256SUMS"
export GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=mod
mkdir -p "$root"
if command -v flock >/dev/null; then exec 9>"$dir.lock" && flock 9; fi
if valid "$dir"; then echo "$dir"; exit 0; fi

work=$(mktemp -d "$root/.argocd-crds.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/crds"
log "go mod download $module@$version"
src=$(cd "$work" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -n $src && -d $src/manifests/crds ]] \
  || die "go mod download $module@$version gave no manifests/crds (is the module proxy reachable? GOPROXY=$(go env GOPROXY))"
for f in "${files[@]}"; do
  [[ -f $src/manifests/crds/$f ]] || die "$module@$version has no manifests/crds/$f"
  cp "$src/manifests/crds/$f" "$work/crds/$f"
  chmod 0644 "$work/crds/$f"
done
(cd "$work" && sha256sum -- "${files[@]/#/crds/}" >SHA256SUMS)
chmod 0755 "$work"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
valid "$dir" || die "the cache $dir does not check after writing it"
log "Argo CD $version's ${files[*]} in $dir"
echo "$dir"
