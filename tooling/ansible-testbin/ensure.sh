#!/usr/bin/env bash
# Installs ansible-core from PyPI into a virtual environment, once, in a cache outside the repo,
# and prints the directory holding ansible-playbook and ansible-galaxy as the last line on
# stdout (progress goes to stderr). The nodekit.nr collection's tests (ansible/) build the
# collection with ansible-galaxy and run ansible-playbook from there.
#
#   tooling/ansible-testbin/ensure.sh                   # install if needed, print bin dir
#   tooling/ansible-testbin/ensure.sh --print-versions  # JSON of the versions used
#
# How: `python3 -m venv` with the host's /usr/bin/python3 (>= 3.11), then pip installs exactly
# the versions requirements.txt pins (no other package, no upgrade of pip) into
# <cache>/ansible-<version>-py<python>-r<recipe>. A directory is used only once it was built
# whole (.complete) and its ansible-playbook runs a play. Nothing is installed on the
# machine.
#
# Environment:
#   NODEKIT_ANSIBLE_TESTBIN_DIR  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/ansible-testbin)
#   NODEKIT_ANSIBLE_PYTHON       the Python to build the environment with (default /usr/bin/python3)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${NODEKIT_ANSIBLE_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodekit/ansible-testbin}
python=${NODEKIT_ANSIBLE_PYTHON:-/usr/bin/python3}
requirements="$here/requirements.txt"
# Bump when requirements.txt or the steps below change, so existing caches are rebuilt.
recipe=1
version=$(awk -F'==' '$1 == "ansible-core" { print $2 }' "$requirements")

log() { printf 'ansible-testbin: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ${1-} == --print-versions ]]; then
  printf '{"ansible-core":"%s"}\n' "$version"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--print-versions]"

[[ -x $python ]] || die "$python not found: ansible-core runs on Python >= 3.11 (Debian's python3 and python3-venv, or set NODEKIT_ANSIBLE_PYTHON)"
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' ||
  die "$python is Python $pyver: ansible-core $version needs >= 3.11 (set NODEKIT_ANSIBLE_PYTHON to one)"

dir="$root/ansible-$version-py$pyver-r$recipe"
bin="$dir/bin"

# works DIR: DIR's ansible-playbook runs a play on localhost, and ansible-galaxy answers.
works() {
  [[ -f $1/../.complete && -x $1/ansible-playbook && -x $1/ansible-galaxy ]] || return 1
  local probe ok=0
  probe=$(mktemp -d)
  printf -- '- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.assert: {that: [1 + 1 == 2]}\n' >"$probe/play.yml"
  # Ansible's own files go to the probe, not to ~/.ansible (both commands make its tmp/ there).
  ANSIBLE_LOCAL_TEMP="$probe/tmp" ANSIBLE_HOME="$probe/home" \
    "$1/ansible-playbook" -i localhost, -c local "$probe/play.yml" >/dev/null 2>&1 || ok=1
  ANSIBLE_LOCAL_TEMP="$probe/tmp" ANSIBLE_HOME="$probe/home" "$1/ansible-galaxy" --version >/dev/null 2>&1 || ok=1
  rm -rf "$probe"
  return $ok
}

if works "$bin"; then echo "$bin"; exit 0; fi

"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  die "$python cannot make a virtual environment: install Debian's python3-venv (apt-get install python3-venv), or set NODEKIT_ANSIBLE_PYTHON"
mkdir -p "$root"
# One builder at a time; a half-built directory is never used.
if command -v flock >/dev/null; then exec 9>"$root/.lock" && flock 9; fi
if works "$bin"; then echo "$bin"; exit 0; fi

trap 'exit 130' INT
trap 'exit 143' TERM

log "installing ansible-core $version into a virtual environment (Python $pyver)…"
start=$SECONDS
# A venv's scripts name its path, so it is made in place; .complete marks one fully built
# (works() needs it), and a directory without it is removed and made again.
rm -rf "$dir"
"$python" -m venv "$dir" >&2 || die "$python -m venv $dir failed"
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --requirement "$requirements" >&2 ||
  die "pip install failed (the package index not reachable? see above); run this script again when it is"
touch "$dir/.complete"
works "$bin" || die "the ansible-core in $dir does not run a play; see: $bin/ansible-playbook --version"
log "installed ansible-core $version in $((SECONDS - start))s"
echo "$bin"
