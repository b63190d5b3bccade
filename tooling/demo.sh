#!/usr/bin/env bash
# The main job on its default inputs, run by `./run demo` after set-up.
# The NVKE site spec generated from examples/hosts.csv, printed to stdout; then nr's
# registration planned (--dry-run) against the NodeRings emulator, and nr cluster status.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nvkectl() { node "$root/apps/nvkectl/bin/run.js" "$@"; }
nr() { node "$root/apps/nr/bin/run.js" "$@"; }

cd "$root"
echo "# nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site" >&2
nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site

# nr against the NodeRings emulator (its development token), with a ~/.nr of its own.
work=$(mktemp -d)
node tooling/noderings-emulator/src/main.ts --port 0 >"$work/url" 2>"$work/emulator.log" &
emulator=$!
trap 'kill "$emulator" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
export NR_HOME="$work/nr" NR_API_TOKEN=nr-emulator-dev-token
NR_API_URL=$(head -1 "$work/url")
export NR_API_URL
echo "# nr cluster register --name demo-agent --dry-run   (NR_API_URL=$NR_API_URL)" >&2
nr cluster register --name demo-agent --dry-run
echo "# nr cluster status" >&2
nr cluster status
