#!/usr/bin/env bash
# Build the Debian packages out of a copy of this tree and use them the way
# a C user would, then leave the machine as it was:
#   1. copy the tree (tracked and untracked files, not ignored ones such as
#      _build/) to WORKDIR/src/parvis and run
#      'dpkg-buildpackage -us -uc -b' there (DEB_BUILD_OPTIONS=nocheck:
#      the test suite runs in tests/run.sh, debian/rules says why);
#   2. lintian on the result: any error fails, warnings are listed;
#   3. install libparvis0, libparvis-dev and parvis-tools (dpkg -i, then
#      apt-get -f install for their dependencies);
#   4. build the installed example (sad_example.c, as examples/ has it)
#      with 'pkg-config --cflags --libs parvis' and run it on the installed
#      Tsukuba pair; check that the C API manual is installed; run
#      'parvis --help' and 'parvis-bench --help' from /usr/bin;
#   5. purge the three packages and every package step 3 pulled in (also
#      when a step fails).
# Each step's time is printed.  Needs root (or sudo) and the packages of
# build-aux/debian-packages-all.txt (debhelper, lintian, doxygen among them).
#
#   tests/test_debian.sh [WORKDIR]     (default: _build/tests/tmp/debian)
set -uo pipefail

top="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$top/_build/tests/tmp/debian}"
packages=(libparvis0 libparvis-dev parvis-tools)

fail() {
    echo "FAIL: $*"
    exit 1
}

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "installing packages needs root or sudo"
    sudo_cmd=(sudo)
fi
for tool in dpkg-buildpackage dh lintian doxygen pkg-config; do
    command -v "$tool" >/dev/null ||
        fail "$tool not found (bash build-aux/install-packages.sh all)"
done
for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
        fail "$p is already installed; this test installs and purges it, so remove it first"
    fi
done

# step NAME COMMAND...: run one step and print its time.
step() {
    local name=$1 start status
    shift
    echo "==> $name"
    start=$(date +%s)
    "$@"
    status=$?
    echo "    $name: $(($(date +%s) - start)) s"
    return $status
}

copy_tree() {
    rm -rf "$work" && mkdir -p "$work/src/parvis" || return 1
    if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # --ignore-failed-read: a tracked file deleted in the tree is left out.
        (cd "$top" && git ls-files -z --cached --others --exclude-standard |
            tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work/src/parvis"
    else
        (cd "$top" && tar --exclude='./_build*' --exclude='./debian/build' -cf - .) |
            tar -xf - -C "$work/src/parvis"
    fi
}

build_packages() {
    (cd "$work/src/parvis" &&
        dpkg-checkbuilddeps &&
        DEB_BUILD_OPTIONS="nocheck parallel=$(nproc 2>/dev/null || echo 2)" \
            dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
        { tail -n 60 "$work/build.log"; echo "full log: $work/build.log"; return 1; }
    ls "$work"/src/*.deb
}

run_lintian() {
    local changes
    changes=$(ls "$work"/src/parvis_*.changes) || return 1
    # --fail-on error: warnings are reported, errors fail.
    lintian --fail-on error --info "$changes" >"$work/lintian.log" 2>&1
    local status=$?
    cat "$work/lintian.log"
    echo "lintian: $(grep -c '^E:' "$work/lintian.log") errors, $(grep -c '^W:' "$work/lintian.log") warnings"
    return $status
}

# Every package installed now, to purge what the installation adds.
installed_list() {
    dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 ~ /^.i/ {print $2}' | sort
}

install_packages() {
    installed_list >"$work/before.txt"
    # The three packages (the -dbgsym ones the build also makes are left out).
    "${sudo_cmd[@]}" dpkg -i "$work"/src/libparvis0_*.deb "$work"/src/libparvis-dev_*.deb \
        "$work"/src/parvis-tools_*.deb ||
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -f install -y -q --no-install-recommends ||
        return 1
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || fail "$p not installed"
    done
}

purge_packages() {
    local added
    [ -f "$work/before.txt" ] || return 0
    installed_list >"$work/after.txt"
    added=$(comm -13 "$work/before.txt" "$work/after.txt" | tr '\n' ' ')
    [ -n "$added" ] || return 0
    echo "purging: $added"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" dpkg --purge $added
    installed_list >"$work/after.txt"
    cmp -s "$work/before.txt" "$work/after.txt" || {
        echo "left installed:"; comm -13 "$work/before.txt" "$work/after.txt"; return 1; }
}

use_packages() {
    local run="$work/use" example=/usr/share/doc/libparvis-dev/examples/sad_example.c
    local pair=/usr/share/parvis/stereo/tsukuba
    mkdir -p "$run" && cd "$run" || return 1
    if [ -f "$example.gz" ]; then zcat "$example.gz" >sad_example.c; else cp "$example" sad_example.c; fi ||
        fail "the example is not installed"
    cmp -s sad_example.c "$top/examples/sad_example.c" || fail "the installed example differs from examples/sad_example.c"
    echo "pkg-config --cflags --libs parvis: $(pkg-config --cflags --libs parvis)"
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra sad_example.c -o sad_example $(pkg-config --cflags --libs parvis) ||
        fail "the example does not build against the packages"
    # /lib is /usr/lib on Debian 12 (merged /usr): ldd may name either.
    ldd ./sad_example | grep -Eq 'libparvis\.so\.0 => /(usr/)?lib/' ||
        { ldd ./sad_example; fail "the example does not load the installed libparvis.so.0"; }
    ./sad_example "$pair/left.pgm" "$pair/right.pgm" out.pfm || fail "the example exited non-zero"
    [ "$(head -c 2 out.pfm)" = "Pf" ] || fail "the example wrote no PFM"
    [ -f /usr/share/doc/libparvis-dev/html/index.html ] || fail "the C API manual is not installed"
    grep -q 'pv_stereo_sad' /usr/share/doc/libparvis-dev/html/stereo_8h.html ||
        fail "the manual lacks pv_stereo_sad"
    /usr/bin/parvis --help >parvis-help.txt || fail "parvis --help exited non-zero"
    grep -q . parvis-help.txt || fail "parvis --help printed nothing"
    /usr/bin/parvis-bench --help >bench-help.txt || fail "parvis-bench --help exited non-zero"
    grep -q . bench-help.txt || fail "parvis-bench --help printed nothing"
    echo "parvis --help: $(wc -l <parvis-help.txt) lines; parvis-bench --help: $(wc -l <bench-help.txt) lines"
}

start=$(date +%s)
trap 'purge_packages' EXIT
step copy copy_tree || fail "could not copy the tree to $work/src"
step build build_packages || fail "dpkg-buildpackage failed"
step lintian run_lintian || fail "lintian found errors"
step install install_packages || fail "installing the packages failed"
step use use_packages || exit 1
trap - EXIT
step purge purge_packages || fail "purging the packages failed"
echo "test_debian: all steps passed in $(($(date +%s) - start)) s"
