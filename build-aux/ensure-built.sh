#!/usr/bin/env bash
# Shared set-up of the quick-start commands: install missing Debian/Ubuntu
# packages (as root, or through sudo), then configure and build parvis in
# _build/ (an out-of-tree build).  Extra arguments go to configure.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"

mapfile -t packages < <(grep -v '^\s*\(#\|$\)' "$top/build-aux/debian-packages.txt")
missing=()
if command -v dpkg-query >/dev/null; then
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure -q "$@"
make -j"$(nproc)" -s
