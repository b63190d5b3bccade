#!/usr/bin/env bash
# Builds the OCI registries the tests run on loopback, once, from the Go modules pinned beside
# this script, caches them outside the repo, and prints the directory that holds them as the
# last line on stdout (progress goes to stderr):
#
#   registry        the distribution registry v3 (no referrers API: exercises the tag fallback)
#   ggcr-registry   go-containerregistry's pkg/registry behind our main.go (referrers API, auth)
#   cosign, oras    only with --with-extras (cross-checks; cosign takes a few minutes cold)
#
#   tooling/registry-testbin/ensure.sh [--with-extras]
#   tooling/registry-testbin/ensure.sh --print-versions
#
# Environment:
#   NODEKIT_REGISTRY_TESTBIN_DIR  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/registry-testbin)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbin=registry-testbin
# shellcheck source=../k8s-testbin/go-testbin.sh
. "$here/../k8s-testbin/go-testbin.sh"
root=${NODEKIT_REGISTRY_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/registry-testbin}
# Bump when the build flags below change, so existing caches are rebuilt.
recipe=1

distribution=$(modver distribution github.com/distribution/distribution/v3)
ggcr=$(modver ggcr github.com/google/go-containerregistry)
cosign=$(modver cosign github.com/sigstore/cosign/v3)
oras=$(modver oras oras.land/oras)

extras=0
case ${1-} in
  --print-versions)
    printf '{"registry":"%s","ggcr-registry":"%s","cosign":"%s","oras":"%s"}\n' "$distribution" "$ggcr" "$cosign" "$oras"
    exit 0 ;;
  --with-extras) extras=1 ;;
  "") ;;
  *) die "usage: $0 [--with-extras | --print-versions]" ;;
esac

wanted=(registry ggcr-registry)
[[ $extras == 1 ]] && wanted+=(cosign oras)
complete() { local b; for b in "${wanted[@]}"; do [[ -x $1/$b ]] || return 1; done; }

modhash=$(cd "$here" && { echo "recipe=$recipe"; cat ./*/go.mod ./*/go.sum ./*/*.go; } | sha)

if ! command -v go >/dev/null 2>&1; then
  while IFS= read -r dir; do
    if complete "$dir"; then echo "$dir"; exit 0; fi
  done < <(ls -dt "$root"/*-"$modhash"/bin 2>/dev/null)
  die "go not found and no cached build in $root. Install Go >= 1.24 (go fetches the newer toolchain these modules need unless GOTOOLCHAIN=local)."
fi

export GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
gover=$(for d in distribution ggcr; do (cd "$here/$d" && go env GOVERSION); done | sort -u | paste -sd+ -)
bin="$root/$gover-$modhash/bin"

if complete "$bin"; then echo "$bin"; exit 0; fi

lock_bin

build registry "$distribution" distribution github.com/distribution/distribution/v3/cmd/registry \
  "-X github.com/distribution/distribution/v3/version.version=$distribution"
build ggcr-registry "$ggcr" ggcr . ""
if [[ $extras == 1 ]]; then
  build cosign "$cosign" cosign github.com/sigstore/cosign/v3/cmd/cosign \
    "-X sigs.k8s.io/release-utils/version.gitVersion=$cosign"
  build oras "$oras" oras oras.land/oras/cmd/oras "-X oras.land/oras/internal/version.BuildMetadata="
fi
echo "$bin"
