#!/bin/sh
# parvis info (version, backends, devices, the configuration in effect) and
# the progress line: --progress on a short stereo run writes one on stderr
# that ends at 100%, and without it (stderr not a terminal) nothing is
# written.  Run from the build directory, as the other CLI tests.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
data="$srcdir/tests/data/stereo/tsukuba"
out=tests/tmp/cli-info
mkdir -p "$out" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# info: the version, the backends, the table with a set value and a default
if ! PARVIS_MEMORY_LIMIT=3G ./parvis info >"$out/info" 2>"$out/stderr"; then
    fail "parvis info exited non-zero: $(cat "$out/stderr")"
fi
grep -q "^parvis [0-9]" "$out/info" || fail "info lacks the version"
grep -q "^backends: cpu" "$out/info" || fail "info lacks the backends"
grep -q "^configuration (" "$out/info" || fail "info lacks the configuration"
grep -q "^  PARVIS_MEMORY_LIMIT = 3G$" "$out/info" || fail "info lacks the value set"
grep -q "^  PARVIS_KERNEL_TIMING (unset: runs)$" "$out/info" ||
    fail "info lacks a default"
names=$(grep -c "^  PARVIS_" "$out/info")
documented=$(grep -c '^| `PARVIS_' "$srcdir/docs/configuration.md")
[ "$names" -eq "$documented" ] ||
    fail "info lists $names variables, docs/configuration.md $documented"
./parvis info --help | grep -q "^usage: parvis info" || fail "info --help lacks its usage"
./parvis --help | grep -q "^  info " || fail "parvis --help lacks info"

# the progress line, on both backends
for backend in cpu opencl; do
    if [ "$backend" = opencl ] && ! ./parvis devices | grep -q "^OpenCL devices: [1-9]"; then
        continue
    fi
    run="./parvis stereo $data/left.pgm $data/right.pgm -o $out/d.pfm --method bp --ndisp 16
        --levels 2 --iterations 3 --backend $backend"
    if ! $run --progress 2>"$out/progress"; then
        fail "$backend: stereo bp --progress failed: $(cat "$out/progress")"
    fi
    tr '\r' '\n' <"$out/progress" | grep -q "^parvis: stereo_bp 100% (6/6)$" ||
        fail "$backend: no progress line ending at 100%: $(od -c "$out/progress" | head -5)"
    tr '\r' '\n' <"$out/progress" | grep -q "^parvis: stereo_bp   0% (0/6)$" ||
        fail "$backend: the progress line does not start at 0%"
    if ! $run 2>"$out/quiet"; then
        fail "$backend: stereo bp failed: $(cat "$out/quiet")"
    fi
    [ -s "$out/quiet" ] && fail "$backend: progress written without --progress to a file"
done

[ "$fails" -eq 0 ] && echo "cli info and progress: ok"
[ "$fails" -eq 0 ]
