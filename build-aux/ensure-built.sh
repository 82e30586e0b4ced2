#!/usr/bin/env bash
# Shared set-up of the quick-start commands: install the missing Debian/Ubuntu
# packages of build-aux/debian-packages.txt (as root, or through sudo), then
# configure and build parvis in _build/ (an out-of-tree build).  Extra
# arguments go to configure.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"

bash "$top/build-aux/install-packages.sh" required

cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure -q "$@"
make -j"$(nproc)" -s
