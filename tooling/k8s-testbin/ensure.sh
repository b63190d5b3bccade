#!/usr/bin/env bash
# Builds kube-apiserver, etcd, helm and clusterctl once from the Go modules pinned
# beside this script, caches them outside the repo, and prints the directory that
# holds all four as the last line on stdout (progress goes to stderr).
#
#   tooling/k8s-testbin/ensure.sh                   # build if needed, print bin dir
#   tooling/k8s-testbin/ensure.sh --print-versions  # JSON of the pinned versions
#
# Environment:
#   NODEKIT_TESTBIN_DIR      cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/k8s-testbin)
#   KUBEBUILDER_ASSETS       dir with kube-apiserver and etcd (e.g. envtest's): used instead of building those two
#   NODEKIT_TESTBIN_MEASURE  =1 wraps each `go build` in `/usr/bin/time -v` (cold-build figures in README.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testbin=k8s-testbin
# shellcheck source=go-testbin.sh
. "$here/go-testbin.sh"
root=${NODEKIT_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/k8s-testbin}
# Bump when the build flags below change, so existing caches are rebuilt.
recipe=1

k8s=$(modver kube-apiserver k8s.io/kubernetes)
etcd=$(modver etcd go.etcd.io/etcd/server/v3)
helm=$(modver helm helm.sh/helm/v3)
capi=$(modver clusterctl sigs.k8s.io/cluster-api)

if [[ ${1-} == --print-versions ]]; then
  printf '{"kube-apiserver":"%s","etcd":"%s","helm":"%s","clusterctl":"%s"}\n' "$k8s" "$etcd" "$helm" "$capi"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

modhash=$(cd "$here" && { echo "recipe=$recipe"; cat kube-apiserver/go.{mod,sum} etcd/go.{mod,sum} helm/go.{mod,sum} clusterctl/go.{mod,sum}; } | sha)
complete() { local b; for b in kube-apiserver etcd helm clusterctl; do [[ -x $1/$b ]] || return 1; done; }

assets=
if [[ -n ${KUBEBUILDER_ASSETS-} ]]; then
  if [[ -x $KUBEBUILDER_ASSETS/kube-apiserver && -x $KUBEBUILDER_ASSETS/etcd ]]; then
    assets=$(cd "$KUBEBUILDER_ASSETS" && pwd -P)
  else
    log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no kube-apiserver and etcd; building them"
  fi
fi

# link_assets HELM_DIR CLUSTERCTL_DIR: a dir of symlinks to the KUBEBUILDER_ASSETS pair plus helm and clusterctl.
link_assets() {
  local out
  out="$root/kubebuilder-assets-$(printf '%s' "$assets" | sha)"
  mkdir -p "$out"
  ln -sfn "$assets/kube-apiserver" "$out/kube-apiserver"
  ln -sfn "$assets/etcd" "$out/etcd"
  ln -sfn "$1/helm" "$out/helm"
  ln -sfn "$2/clusterctl" "$out/clusterctl"
  echo "$out"
}

if ! command -v go >/dev/null 2>&1; then
  # No Go: fall back to a cache built earlier from these same go.mod/go.sum files (by any Go version).
  while IFS= read -r dir; do
    if [[ -n $assets && -x $dir/helm && -x $dir/clusterctl ]]; then link_assets "$dir" "$dir"; exit 0; fi
    if [[ -z $assets ]] && complete "$dir"; then echo "$dir"; exit 0; fi
  done < <(ls -dt "$root/$k8s"-*-"$modhash"/bin 2>/dev/null)
  if [[ -n $assets ]] && command -v helm >/dev/null && command -v clusterctl >/dev/null; then
    link_assets "$(dirname "$(command -v helm)")" "$(dirname "$(command -v clusterctl)")"
    exit 0
  fi
  die "go not found and no cached build in $root. Either install Go >= 1.24 (helm's module needs 1.26; go fetches that toolchain itself unless GOTOOLCHAIN=local), or set KUBEBUILDER_ASSETS to a dir holding kube-apiserver and etcd (envtest binaries) and put helm and clusterctl on PATH."
fi

export GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
# The Go version each module builds with (after any GOTOOLCHAIN switch) is part of the key.
gover=$(for d in kube-apiserver etcd helm clusterctl; do (cd "$here/$d" && go env GOVERSION); done | sort -u | paste -sd+ -)
bin="$root/$k8s-$gover-$modhash/bin"

if [[ -z $assets ]] && complete "$bin"; then echo "$bin"; exit 0; fi
if [[ -n $assets && -x $bin/helm && -x $bin/clusterctl ]]; then link_assets "$bin" "$bin"; exit 0; fi

lock_bin

# meta DIR MODULE: "<commit>|<release time>" of a required module, as the module proxy reports them
# (the commit only where the proxy knows it).
meta() {
  local ver
  ver=$(modver "$1" "$2")
  cd "$here/$1" && printf '%s|%s\n' \
    "$(go mod download -json "$2@$ver" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)".*/\1/p' | head -1)" \
    "$(go list -m -f '{{with .Time}}{{.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' "$2")"
}

if [[ -z $assets ]]; then
  m=$(meta kube-apiserver k8s.io/kubernetes); commit=${m%%|*} date=${m#*|}
  minor=${k8s#v1.}
  minor=${minor%%.*}
  ld=
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$date -X $p.gitCommit=$commit"
  done
  build kube-apiserver "$k8s" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ld"

  m=$(meta etcd go.etcd.io/etcd/server/v3); commit=${m%%|*} date=${m#*|}
  build etcd "$etcd" etcd go.etcd.io/etcd/server/v3 "${commit:+-X go.etcd.io/etcd/api/v3/version.GitSHA=${commit:0:8}}"
fi

m=$(meta helm helm.sh/helm/v3); commit=${m%%|*} date=${m#*|}
clientgo=$(modver helm k8s.io/client-go)
clientgo=${clientgo#v0.}
p=helm.sh/helm/v3/internal/version
ld="-X $p.version=$helm -X $p.metadata= -X $p.gitTreeState=clean -X $p.gitCommit=$commit"
# Default capabilities for offline `helm template`/`helm lint`, as helm's Makefile derives them from client-go.
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=${clientgo%%.*}"
done
build helm "$helm" helm helm.sh/helm/v3/cmd/helm "$ld"

m=$(meta clusterctl sigs.k8s.io/cluster-api); commit=${m%%|*} date=${m#*|}
minor=${capi#v1.}
minor=${minor%%.*}
p=sigs.k8s.io/cluster-api/version
ld="-X $p.gitVersion=$capi -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$date -X $p.gitCommit=$commit"
build clusterctl "$capi" clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl "$ld"

if [[ -n $assets ]]; then link_assets "$bin" "$bin"; else echo "$bin"; fi
