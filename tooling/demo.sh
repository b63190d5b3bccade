#!/usr/bin/env bash
# The main job on its default inputs, run by `./run demo` after set-up.
# Today: the NVKE site spec generated from examples/hosts.csv, printed to stdout.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nvkectl() { node "$root/apps/nvkectl/bin/run.js" "$@"; }

cd "$root"
echo "# nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site" >&2
nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site
