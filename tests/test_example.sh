#!/bin/sh
# examples/sad_example (the README's C example) run the way a user runs it:
# from a directory of its own, with the bundled Tsukuba pair given by
# absolute paths.  It must write a 384x288 PFM and exit 0; with a missing
# input, an unreadable one or the wrong arguments it must exit non-zero and
# say why, and write nothing.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
abs_srcdir=$(cd "$srcdir" && pwd) || exit 99
example=$(pwd)/examples/sad_example
pair=$abs_srcdir/tests/data/stereo/tsukuba
work=$(pwd)/tests/tmp/example
rm -rf "$work" && mkdir -p "$work" || exit 99
cd "$work" || exit 99

fail() {
    echo "FAIL: $*"
    exit 1
}

"$example" "$pair/left.pgm" "$pair/right.pgm" out.pfm >good.out 2>good.err ||
    fail "exit $? on the Tsukuba pair: $(cat good.err)"
cat good.out
grep -q 'ms end to end' good.out || fail "no timing line"
# PFM: "Pf", then "width height", then the scale
[ "$(head -c 2 out.pfm)" = "Pf" ] || fail "out.pfm is not a grey PFM"
[ "$(sed -n 2p out.pfm | tr -s ' ' | sed 's/ *$//')" = "384 288" ] ||
    fail "out.pfm is not 384x288: $(sed -n 2p out.pfm)"
bytes=$(wc -c <out.pfm)
[ "$bytes" -ge $((384 * 288 * 4)) ] || fail "out.pfm holds $bytes bytes"

expect_failure() {
    label=$1
    shift
    rm -f bad.pfm
    if "$example" "$@" >bad.out 2>bad.err; then
        fail "$label: exit 0"
    fi
    [ -s bad.err ] || fail "$label: nothing on stderr"
    [ ! -e bad.pfm ] || fail "$label: wrote bad.pfm"
    echo "$label: exit non-zero with: $(head -n 1 bad.err)"
}
expect_failure "missing left" "$work/no-such-left.pgm" "$pair/right.pgm" bad.pfm
expect_failure "missing right" "$pair/left.pgm" "$work/no-such-right.pgm" bad.pfm
printf 'not an image\n' >garbage.pgm
expect_failure "unreadable left" garbage.pgm "$pair/right.pgm" bad.pfm
expect_failure "no arguments"
echo "PASS"
