#!/bin/sh
# Install parvis to a prefix and use it the way the README's "Installing to
# a prefix" says: build the installed example (DOCDIR/examples/sad_example.c)
# against it with pkg-config and run it from another directory on the
# installed Tsukuba pair, linked
#   - shared, found through LD_LIBRARY_PATH,
#   - shared, found through an rpath taken from pkg-config,
#   - with libparvis.a (pkg-config --static; no libparvis.so needed at run
#     time), and, where every dependency has a static library (the CPU-only
#     build), fully static (-static).
#
#   tests/test_install.sh WORKDIR [CONFIGURE-ARGS...]
#       configure a fresh build in WORKDIR/build (from this source tree)
#       with --prefix=WORKDIR/prefix, 'make install', then check it;
#   tests/test_install.sh --installed PREFIX
#       only check an existing installation (make installcheck does this).
set -u

srcdir=$(cd "$(dirname "$0")/.." && pwd) || exit 99
CC=${CC:-cc}

fail() {
    echo "FAIL: $*"
    exit 1
}

if [ "${1:-}" = "--installed" ]; then
    [ $# -eq 2 ] || fail "usage: $0 --installed PREFIX"
    prefix=$2
    work=$(mktemp -d "${TMPDIR:-/tmp}/parvis-installcheck.XXXXXX") || exit 99
    trap 'rm -rf "$work"' EXIT
else
    [ $# -ge 1 ] || fail "usage: $0 WORKDIR [CONFIGURE-ARGS...]"
    mkdir -p "$1" || exit 99
    work=$(cd "$1" && pwd) || exit 99
    shift
    prefix=$work/prefix
    rm -rf "$prefix" "$work/build" && mkdir -p "$work/build" || exit 99
    [ -x "$srcdir/configure" ] || fail "run autoreconf -fi in $srcdir first"
    echo "configure --prefix=$prefix $*"
    (cd "$work/build" && "$srcdir/configure" -q --prefix="$prefix" "$@") ||
        fail "configure exited $?"
    jobs=$(nproc 2>/dev/null || echo 2)
    make -C "$work/build" -j"$jobs" -s install >"$work/make-install.log" 2>&1 ||
        { tail -n 40 "$work/make-install.log"; fail "make install exited non-zero"; }
    echo "installed into $prefix"
fi

# The installed files a user needs.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists parvis || fail "pkg-config does not find parvis.pc under $prefix/lib/pkgconfig"
libdir=$(pkg-config --variable=libdir parvis)
docdir=$prefix/share/doc/parvis
example=$docdir/examples/sad_example.c
pair=$prefix/share/parvis/stereo/tsukuba
for f in "$prefix/include/parvis.h" "$libdir/libparvis.so" "$libdir/libparvis.a" "$example" \
    "$pair/left.pgm" "$pair/right.pgm" "$prefix/bin/parvis"; do
    [ -e "$f" ] || fail "not installed: $f"
done
echo "pkg-config --cflags --libs parvis: $(pkg-config --cflags --libs parvis)"
echo "pkg-config --static --libs parvis: $(pkg-config --static --libs parvis)"

mkdir -p "$work/run" || exit 99
cd "$work/run" || exit 99

# run_example LABEL PROGRAM [ENV...]: the example on the installed pair, from
# this directory; it must exit 0 and write its PFM.
run_example() {
    label=$1
    program=$2
    shift 2
    rm -f out.pfm
    env "$@" "$program" "$pair/left.pgm" "$pair/right.pgm" out.pfm >"$label.out" 2>&1 ||
        { cat "$label.out"; fail "$label: the example exited non-zero"; }
    [ "$(head -c 2 out.pfm)" = "Pf" ] || fail "$label: no PFM written"
    echo "$label: $(tail -n 1 "$label.out")"
}

needs_libparvis_so() {
    readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libparvis\.so'
}

# shellcheck disable=SC2046  # pkg-config's flags are meant to split
# 1. shared, through LD_LIBRARY_PATH
$CC -o sad_shared "$example" $(pkg-config --cflags --libs parvis) || fail "shared link"
needs_libparvis_so sad_shared || fail "the shared build does not need libparvis.so"
run_example shared ./sad_shared LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 2. shared, with the library directory as an rpath
# shellcheck disable=SC2046
$CC -o sad_rpath "$example" $(pkg-config --cflags --libs parvis) -Wl,-rpath,"$libdir" ||
    fail "rpath link"
run_example rpath ./sad_rpath

# 3. libparvis.a, the system libraries shared
static_libs=$(pkg-config --static --libs parvis | sed 's/-lparvis\b/-l:libparvis.a/')
# shellcheck disable=SC2086
$CC -o sad_static "$example" $(pkg-config --cflags parvis) $static_libs ||
    fail "link with libparvis.a: $static_libs"
! needs_libparvis_so sad_static || fail "the static build still needs libparvis.so"
run_example static ./sad_static

# 4. fully static, where the dependencies all ship static libraries (not
# OpenCL's ICD loader, which must load vendor drivers at run time).
# Debian's libtiff-4.pc names its Lerc codec but not the C++ runtime that
# codec needs, so a static link through it adds -lstdc++ itself.
cxx_runtime=""
if pkg-config --print-requires-private parvis | grep -q libtiff-4; then
    cxx_runtime=-lstdc++
fi
without_archive=""
for flag in $(pkg-config --static --libs-only-l parvis); do
    name=${flag#-l}
    if [ "$name" != parvis ] && [ "$($CC -print-file-name="lib$name.a")" = "lib$name.a" ]; then
        without_archive="$without_archive $name"
    fi
done
if pkg-config --print-requires-private parvis | grep -q OpenCL; then
    echo "fully static: not tried (the OpenCL ICD loader has no static library)"
elif [ -n "$without_archive" ]; then
    echo "fully static: not tried (no static library of:$without_archive)"
else
    # shellcheck disable=SC2046
    $CC -static -o sad_full_static "$example" $(pkg-config --cflags --static --libs parvis) $cxx_runtime \
        >full-static.log 2>&1 || { cat full-static.log; fail "fully static link"; }
    readelf -d sad_full_static 2>/dev/null | grep -q NEEDED &&
        fail "the -static build has shared dependencies"
    run_example full-static ./sad_full_static
fi

# 5. the OpenCL pipeline example (parvis/interop.h), where the OpenCL backend
# was built: compiled against the installed header with OpenCL's flags, and
# run when a device is present.
chain=$docdir/examples/opencl_chain.c
if [ -e "$prefix/include/parvis/interop.h" ]; then
    [ -e "$chain" ] || fail "not installed: $chain"
    # shellcheck disable=SC2046
    $CC -std=c11 -Wall -Wextra -o opencl_chain "$chain" $(pkg-config --cflags --libs parvis OpenCL) \
        -Wl,-rpath,"$libdir" || fail "opencl_chain: the installed example does not build"
    if "$prefix/bin/parvis" devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
        run_example opencl_chain ./opencl_chain
    else
        echo "opencl_chain: built; no OpenCL device to run it on"
    fi
fi
echo "PASS"
