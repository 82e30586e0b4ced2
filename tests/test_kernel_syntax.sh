#!/bin/sh
# The OpenCL kernels through a second compiler, with the options they were
# really built with.  PoCL's compiler lets some errors pass that other
# drivers refuse (a call to a function declared further down once built on
# PoCL and failed NVIDIA's build), so every program the library builds
# while running a few workloads here is checked again by clang's OpenCL
# front end with -Werror.  Skipped without a clang that compiles OpenCL C.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
. "$srcdir/tests/skip_unless.sh"
kernels="$srcdir/backends/opencl/kernels"
out=tests/tmp/kernel-syntax
CLANG=${CLANG:-clang}

skip_unless_opencl
skip_unless_command "$CLANG"
rm -rf "$out" && mkdir -p "$out/cache" || exit 99
printf '__kernel void k(__global float *a) { a[0] = 1.0f; }\n' > "$out/probe.cl"
if ! "$CLANG" -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header \
    "$out/probe.cl" 2>/dev/null; then
    echo "SKIP: $CLANG does not compile OpenCL C"
    exit 77
fi

# A fresh binary cache, so that every program is built (and logged).
XDG_CACHE_HOME=$(pwd)/$out/cache
PARVIS_CL_OPTIONS_LOG=$(pwd)/$out/options.txt
export XDG_CACHE_HOME PARVIS_CL_OPTIONS_LOG
quiet="--runs 1 --warmup 0 --cpu-runs 1 --cpu-warmup 0 --data $srcdir/tests/data"
./parvis-bench --quick $quiet > "$out/bench.txt" 2>&1 || { echo "FAIL: parvis-bench --quick"; exit 1; }
./parvis-bench --case tsukuba --bp-update cooperative $quiet > "$out/bench-coop.txt" 2>&1 ||
    { echo "FAIL: parvis-bench --case tsukuba --bp-update cooperative"; exit 1; }
for program in test_filter test_colour test_volume_u16; do
    tests/$program > "$out/$program.txt" 2>&1 || { echo "FAIL: tests/$program"; exit 1; }
done

[ -s "$PARVIS_CL_OPTIONS_LOG" ] || { echo "FAIL: no program was logged"; exit 1; }
failed=0 checked=0
programs=$(cut -f1 "$PARVIS_CL_OPTIONS_LOG" | sort -u | tr '\n' ' ')
for expect in stereo stereo_bp features colour filter register octreg flow geometry; do
    case " $programs" in
        *" $expect "*) ;;
        *) echo "FAIL: the workloads built no $expect program"; failed=1 ;;
    esac
done
sort -u "$PARVIS_CL_OPTIONS_LOG" > "$out/unique.txt"
while IFS="$(printf '\t')" read -r name options; do
    checked=$((checked + 1))
    # the options are -D and -cl-* flags without spaces inside a value
    # shellcheck disable=SC2086
    if ! "$CLANG" -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Werror \
        $options "$kernels/$name.cl" > "$out/clang-$checked.txt" 2>&1; then
        echo "FAIL: kernels/$name.cl with '$options':"
        head -20 "$out/clang-$checked.txt"
        failed=1
    fi
done < "$out/unique.txt"
echo "$checked program builds checked with $CLANG -Werror ($programs)"
[ "$failed" -eq 0 ] || exit 1
echo "PASS"
