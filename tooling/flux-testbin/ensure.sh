#!/usr/bin/env bash
# Flux's source-controller and kustomize-controller, built once from the Go modules the module
# proxy serves, with their CRDs, into a cache outside the repo; prints the cache directory as the
# last line on stdout (progress goes to stderr). The directory holds:
#   source-controller, kustomize-controller   the two controllers (the tests run them as processes
#                                             against a kube-apiserver, with a kubeconfig)
#   crds/                                     their CRDs, each from the module its controller is built from
#   SHA256SUMS                                of all of the above, checked before every use
#
#   tooling/flux-testbin/ensure.sh                   # build if needed, print the directory
#   tooling/flux-testbin/ensure.sh --print-versions  # JSON of the versions used
#
# Versions. The v1.10 modules need Go >= 1.27 (`go mod download` refuses them with
# GOTOOLCHAIN=local; this machine has Go 1.26). kustomize-controller is v1.9.6, the newest v1.9.
# source-controller is v1.9.0, not v1.9.6: v1.9.6 requires github.com/fluxcd/pkg/artifact@v0.18.3
# (and helmtestserver@v0.40.2), which the module proxy refuses:
#   go: github.com/fluxcd/pkg/artifact@v0.18.3: reading .../github.com/fluxcd/pkg/artifact/@v/v0.18.3.zip: 403 Forbidden
#   	server response: This module version is not available.
# v1.9.0 requires artifact@v0.18.0, which it serves. Both speak the same API versions
# (source.toolkit.fluxcd.io/v1 OCIRepository, kustomize.toolkit.fluxcd.io/v1 Kustomization).
#
# How: `go mod download` fetches each controller's module source; it is copied aside (the module
# cache is read-only), its `replace <module>/api => ./api` dropped (the zip has no api/: that is a
# module of its own, required at the same version), built there with `go build` (GOFLAGS=-mod=mod, GOTOOLCHAIN=local,
# CGO_ENABLED=0, -trimpath), and the whole directory is renamed into place once both binaries
# and the CRDs are there, under a lock, so parallel runs build once. Cold: 9 CPU-minutes (56 min
# wall on a 2-core machine at load 20-38); with Go's build cache warm for these flags, a minute or two.
#
# Environment:
#   NODEKIT_FLUX_TESTBIN_DIR  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit)
set -euo pipefail

source_version=v1.9.0
kustomize_version=v1.9.6
# Bump when the build flags below change, so existing caches are rebuilt.
recipe=1
root=${NODEKIT_FLUX_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit}

log() { printf 'flux-testbin: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ${1-} == --print-versions ]]; then
  printf '{"source-controller":"%s","kustomize-controller":"%s"}\n' "$source_version" "$kustomize_version"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

# valid DIR: both controllers and every CRD file are there and match the SHA256SUMS written with them.
valid() {
  [[ -f $1/SHA256SUMS && -x $1/source-controller && -x $1/kustomize-controller ]] || return 1
  (cd "$1" && sha256sum --quiet --check SHA256SUMS >/dev/null 2>&1) || return 1
  [[ $(grep -c 'crds/' "$1/SHA256SUMS") -ge 7 ]]
}

command -v go >/dev/null 2>&1 || die "go not found: install Go 1.26 (the controllers' modules need >= 1.26.0) to build Flux's controllers, or set NODEKIT_FLUX_BIN_DIR to a directory holding source-controller, kustomize-controller and crds/"
export GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
gover=$(go env GOVERSION)
dir="$root/flux-source-$source_version-kustomize-$kustomize_version-$gover-r$recipe"

if valid "$dir"; then echo "$dir"; exit 0; fi

mkdir -p "$root"
if command -v flock >/dev/null; then exec 9>"$dir.lock" && flock 9; fi
if valid "$dir"; then echo "$dir"; exit 0; fi

work=$(mktemp -d "$root/.flux-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/crds"

# build NAME VERSION: fetch github.com/fluxcd/NAME@VERSION, copy its CRDs, build the controller.
build() {
  local name=$1 version=$2 module=github.com/fluxcd/$1 src start=$SECONDS
  log "go mod download $module@$version"
  src=$(cd "$work" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n $src && -f $src/main.go && -d $src/config/crd/bases ]] \
    || die "go mod download $module@$version gave no main.go and config/crd/bases (is the module proxy reachable? GOPROXY=$(go env GOPROXY))"
  cp "$src"/config/crd/bases/*.yaml "$work/crds/"
  cp -R "$src" "$work/src-$name"
  chmod -R u+w "$work/src-$name"
  # The module's zip leaves out its nested api/ module, which go.mod replaces with ./api: use the
  # api module the proxy serves at the same version instead (go.mod requires exactly that one).
  (cd "$work/src-$name" && go mod edit -dropreplace "$module/api")
  log "building $name $version with $gover…"
  (cd "$work/src-$name" && go build -trimpath -ldflags "-s -w" -o "$work/$name" .) \
    || die "go build of $module@$version failed (output above)"
  rm -rf "$work/src-$name"
  log "built $name in $((SECONDS - start))s"
}

build source-controller "$source_version"
build kustomize-controller "$kustomize_version"
chmod -R u+w "$work/crds"
(cd "$work" && sha256sum -- source-controller kustomize-controller crds/*.yaml >SHA256SUMS)
chmod 0755 "$work"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
valid "$dir" || die "the cache $dir does not check after writing it"
log "Flux source-controller $source_version, kustomize-controller $kustomize_version and their CRDs in $dir"
echo "$dir"
