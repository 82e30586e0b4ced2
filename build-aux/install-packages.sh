#!/usr/bin/env bash
# Install the Debian/Ubuntu packages of the named lists that are missing
# (as root, or through sudo).  Lists (build-aux/):
#   debian-packages.txt        building parvis and the quick test command
#   debian-packages-all.txt    the long steps of 'tests/run.sh --all'
#                              (Debian packaging, the manual, sanitizers)
#   debian-packages-peers.txt  optional peers that some tests and the
#                              benchmarks compare with (OpenCV, VLFeat)
# Usage: build-aux/install-packages.sh [required] [all] [peers]
# (no argument: the required list only).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

list_file() {
    case "$1" in
        required) echo "$here/debian-packages.txt" ;;
        all) echo "$here/debian-packages-all.txt" ;;
        peers) echo "$here/debian-packages-peers.txt" ;;
        *) echo "install-packages.sh: unknown list '$1' (required, all, peers)" >&2; return 1 ;;
    esac
}

[ "$#" -gt 0 ] || set -- required
packages=()
for name in "$@"; do
    file="$(list_file "$name")"
    mapfile -t -O "${#packages[@]}" packages < <(grep -v '^\s*\(#\|$\)' "$file")
done

command -v dpkg-query >/dev/null || { echo "no dpkg: install the packages of $* by hand"; exit 0; }
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -gt 0 ] || exit 0
echo "installing: ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
