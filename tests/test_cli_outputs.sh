#!/bin/sh
# The parvis command line's outputs under failure, and its options against
# its help:
#   - a full standard output (/dev/full) fails every command that prints a
#     result, with a message, instead of exiting 0;
#   - a full disk (a small tmpfs, or a file-size limit where mounting is not
#     allowed) leaves no truncated file and keeps the file that was there;
#   - a command with several outputs writes all or none of them, and every
#     command names the cause of a missing output folder the same way;
#   - every option each command's --help lists is known to its parser, and
#     the top-level help names only options (and values) the commands take;
#   - --json lines are valid JSON, a file name that is not UTF-8 included;
#   - --time is taken by every command that runs an operation.
# PARVIS=path runs another parvis binary (an older build, to see the checks
# fail).  Everything runs on the CPU backend with small inputs; stereo also
# on OpenCL where a device exists.
# $OCT and $FLOW are command lines, split on purpose; listings are of
# names this script made
# shellcheck disable=SC2086,SC2012
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
parvis=${PARVIS:-./parvis}
data="$srcdir/tests/data/stereo"
out=tests/tmp/cli_outputs
umount "$out/full" 2>/dev/null # left mounted by an interrupted run
rm -rf "$out"
mkdir -p "$out/m" || exit 99
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

L="$data/tsukuba/left.pgm"
R="$data/tsukuba/right.pgm"

# ------------------------------------------------------------ inputs
"$parvis" synth-oct "$out/ref.raw" "$out/tgt.raw" "$out/trace.csv" --size 64x48x40 \
    >/dev/null 2>"$out/stderr" || { cat "$out/stderr"; exit 99; }
"$parvis" synth-flow "$L" "$out/fixed.pfm" "$out/moving.pfm" "$out/truth.flo" \
    >/dev/null 2>"$out/stderr" || { cat "$out/stderr"; exit 99; }
OCT="octreg $out/ref.raw $out/tgt.raw --size 64x48x40 --backend cpu"
FLOW="flow $out/fixed.pfm $out/moving.pfm --levels 2 --warps 1 --iterations 5 --backend cpu"

# ------------------------------------------- 1. a full standard output
# each: a command whose result is what it prints
if [ -w /dev/full ]; then
    while read -r what; do
        if "$parvis" $what >/dev/full 2>"$out/stderr"; then
            fail "parvis $what >/dev/full exited 0"
        elif ! grep -qF "cannot write the standard output" "$out/stderr"; then
            fail "parvis $what >/dev/full: no message: $(cat "$out/stderr")"
        fi
    done <<EOF
$OCT
phasecorr $L $L --backend cpu
ncc $L $L --backend cpu
stereo $L $R --ndisp 16 --backend cpu --json
sift $L --preset fast --backend cpu --json
devices
version
help
stereo --help
EOF
    # a result file and a full stdout: the command failed, so no file either
    "$parvis" stereo "$L" "$R" --ndisp 16 --backend cpu --json -o "$out/m/full.pfm" \
        >/dev/full 2>/dev/null && fail "stereo -o --json >/dev/full exited 0"
    [ -e "$out/m/full.pfm" ] && fail "stereo with a full stdout still wrote its -o file"
else
    echo "no /dev/full: the full standard output is not checked"
fi

# ------------------------------------------------ 2. a full disk
# $full: a folder where writing more than a few KiB fails.  A 64 KiB tmpfs
# when this user may mount one; otherwise a file-size limit (EFBIG instead
# of ENOSPC, through the same error paths).
full="$out/full"
mkdir -p "$full" || exit 99
limit=""
if mount -t tmpfs -o size=64k parvis-test "$full" 2>/dev/null; then
    trap 'umount "$full" 2>/dev/null' EXIT
    # fill it to leave about 8 KiB (two pages) for the outputs to hit
    head -c 53248 /dev/zero >"$full/filler" 2>/dev/null
else
    limit=48 # ulimit -f blocks
    echo "cannot mount a tmpfs: a file-size limit stands in for the full disk"
fi
# run_full NAME command...: fails, leaves in $full only what was there
# (NAME, holding "old", stays as it was)
run_full() {
    keep=$1
    shift
    printf old >"$full/$keep"
    before=$(ls -A "$full" | sort | tr '\n' ' ')
    if [ -n "$limit" ]; then
        (trap '' XFSZ; ulimit -f "$limit"; exec "$parvis" "$@") >"$out/stdout" 2>"$out/stderr"
    else
        "$parvis" "$@" >"$out/stdout" 2>"$out/stderr"
    fi
    status=$?
    [ "$status" -eq 0 ] && fail "parvis $* on a full disk exited 0"
    [ -s "$out/stderr" ] || fail "parvis $* on a full disk: no message"
    after=$(ls -A "$full" | sort | tr '\n' ' ')
    [ "$before" = "$after" ] || fail "parvis $* on a full disk left '$after' (was '$before')"
    [ "$(cat "$full/$keep")" = old ] || fail "parvis $* on a full disk changed $keep"
    rm -f "$full/$keep"
}
run_full keys.txt sift "$L" --preset fast --backend cpu -o "$full/keys.txt"
run_full flow.flo $FLOW -o "$full/flow.flo"
run_full ref.raw synth-oct "$full/ref.raw" "$full/tgt.raw" "$full/trace.csv" --size 64x48x40
# several outputs, the later one failing: the earlier one (in a folder
# with room) is not left either
run_full d.png stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/m/d.pfm" --png "$full/d.png"
[ -e "$out/m/d.pfm" ] && fail "stereo kept -o when --png failed on a full disk"
rm -f "$out/m/d.pfm"

# ------------------------------------ 2. all outputs or none; a missing folder
# run_missing FILE command...: the command's output FILE is in a missing
# folder: it fails saying so, and leaves nothing in $out/m, where its other
# outputs go (a file there before, d.pfm, stays as it was)
run_missing() {
    file=$1
    shift
    printf old >"$out/m/d.pfm"
    if "$parvis" "$@" >"$out/stdout" 2>"$out/stderr"; then
        fail "parvis $* with a missing output folder exited 0"
    elif ! grep -qF "cannot write '$out/missing/$file': No such file or directory" \
        "$out/stderr"; then
        fail "parvis $*: the missing folder is not named as the cause: $(cat "$out/stderr")"
    fi
    left=$(ls -A "$out/m" | tr '\n' ' ')
    [ "$left" = "d.pfm " ] || fail "parvis $* with a missing output folder left '$left'"
    [ "$(cat "$out/m/d.pfm")" = old ] || fail "parvis $*: the file already there changed"
}
run_missing d.png stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/m/d.pfm" --png "$out/missing/d.png"
run_missing c.png $FLOW -o "$out/m/f.flo" --color "$out/missing/c.png"
run_missing t.flo synth-flow "$L" "$out/m/fixed.pfm" "$out/m/moving.pfm" "$out/missing/t.flo"
run_missing e.png $OCT -o "$out/m/s.csv" --enface "$out/missing/e.png"
run_missing m.txt match "$L" "$R" --preset fast --backend cpu --homography "$out/m/h.txt" \
    -o "$out/missing/m.txt"
run_missing x.png match "$L" "$R" --preset fast --backend cpu -o "$out/m/m.txt" \
    --draw "$out/missing/x.png"
run_missing k.txt sift "$L" --preset fast --backend cpu -o "$out/missing/k.txt"
run_missing map.pfm ncc "$L" "$L" --backend cpu -o "$out/missing/map.pfm"
run_missing ref.raw synth-oct "$out/missing/ref.raw" "$out/m/tgt.raw" "$out/m/trace.csv" \
    --size 8x8x8
run_missing f.flo $FLOW -o "$out/missing/f.flo"
# and the success path: every output in place, no temporary left
"$parvis" stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/m/d.pfm" --png "$out/m/d.png" \
    >/dev/null 2>"$out/stderr" || fail "stereo -o --png: $(cat "$out/stderr")"
left=$(ls -A "$out/m" | tr '\n' ' ')
[ "$left" = "d.pfm d.png " ] || fail "stereo -o --png left '$left'"
[ "$(head -c 2 "$out/m/d.pfm")" = Pf ] || fail "stereo -o did not replace the old d.pfm"
# a symbolic link is written through: the link stays, the file it names is replaced
printf old >"$out/m/target.pfm"
ln -s target.pfm "$out/m/link.pfm" || exit 99
"$parvis" stereo "$L" "$R" --ndisp 16 --backend cpu -o "$out/m/link.pfm" >/dev/null \
    2>"$out/stderr" || fail "stereo -o LINK: $(cat "$out/stderr")"
[ -L "$out/m/link.pfm" ] || fail "stereo -o LINK replaced the link"
[ "$(head -c 2 "$out/m/target.pfm")" = Pf ] || fail "stereo -o LINK did not write its target"
rm -f "$out/m/link.pfm" "$out/m/target.pfm" "$out/m/d.png"

# -------------------------- 3. every option --help lists is a known option
# base arguments per command that make the run stop early (missing inputs,
# or a backend the command refuses), so that each option is parsed and
# nothing long runs
base_args() {
    case $1 in
    stereo) echo "no-file no-file --ndisp 4" ;;
    synth-oct) echo "$out/missing/a $out/missing/b $out/missing/c --size 8x8x8" ;;
    synth-flow) echo "no-file $out/missing/a $out/missing/b $out/missing/c" ;;
    sift) echo "no-file --json" ;;
    tune) echo "--backend cpu" ;;
    devices | version) echo "" ;;
    *) echo "no-file no-file" ;;
    esac
}
checked=0
for command in stereo phasecorr ncc flow flow3d synth-flow sift match octreg synth-oct tune \
    devices version; do
    "$parvis" "$command" --help >"$out/help" 2>&1 || fail "parvis $command --help failed"
    # the option names: the lines between "options:" and the blank line after
    options=$(sed -n '/^options:/,/^$/p' "$out/help" | sed -n 's/^  \(-[-a-z0-9]*\).*/\1/p' |
        grep -v '^-h$')
    for option in $options; do
        # a value that no option mistakes for an option; a flag leaves it
        # as a stray argument, which is refused as such
        # shellcheck disable=SC2046 # base_args gives words
        "$parvis" "$command" $(base_args "$command") "$option" 1 >"$out/stdout" \
            2>"$out/stderr" </dev/null
        if grep -q "unknown option" "$out/stderr"; then
            fail "parvis $command refuses $option, which its --help lists: $(cat "$out/stderr")"
        fi
        checked=$((checked + 1))
    done
done
[ "$checked" -gt 100 ] || fail "only $checked options found in the help texts"
# the one the table overflow lost: BP's --devices
"$parvis" stereo "$L" "$R" --ndisp 16 --method bp --devices all --iterations 1 --levels 2 \
    --backend cpu -o "$out/m/bp.pfm" >/dev/null 2>"$out/stderr" ||
    fail "stereo --method bp --devices all: $(cat "$out/stderr")"

# ------------- 6. the top-level help names what the commands take
"$parvis" help >"$out/usage" || fail "parvis help failed"
# each "--option a|b|c" the top-level help gives a command must read the
# same in that command's help; each option it names must be the command's
python3 - "$parvis" "$out/usage" <<'EOF' || fail "the top-level help disagrees with the commands"
import re
import subprocess
import sys

parvis, usage_path = sys.argv[1], sys.argv[2]
usage = open(usage_path, encoding="utf-8").read().split("\n\n")[1]  # the commands
command = None
named = {}  # command -> options the top-level help names for it
for line in usage.splitlines()[1:]:
    first = re.match(r"  ([a-z][a-z0-9-]*)( |$)", line)
    if first:
        command = first.group(1)
    if line.startswith(" " * 26):  # the description column
        continue
    for option, value in re.findall(r"(--[a-z][a-z0-9-]*)(?: ([^ \]]+))?", line):
        named.setdefault(command, []).append((option, value))
bad = 0
for command, options in named.items():
    helptext = subprocess.run([parvis, command, "--help"], capture_output=True,
                              text=True, check=True).stdout
    section = next(part for part in helptext.split("\n\n") if part.startswith("options:"))
    table = dict(re.findall(r"^  (--?[a-z][a-z0-9-]*) ?([^ ]*)", section, re.M))
    for option, value in options:
        if option not in table and option != "--help":
            print(f"top-level help: {command} {option}: not an option of {command}")
            bad += 1
        elif "|" in value and table.get(option) != value:
            print(f"top-level help: {command} {option} {value}: the command takes "
                  f"{table.get(option)}")
            bad += 1
for command, option in [("sift", "--preset"), ("match", "--preset"),
                        ("match", "--homography"), ("match", "--fundamental"),
                        ("tune", "--budget"), ("tune", "--export"), ("sift", "--time"),
                        ("match", "--time"), ("octreg", "--time")]:
    if option not in [o for o, _ in named.get(command, [])]:
        print(f"top-level help: {command} lacks {option}")
        bad += 1
sys.exit(1 if bad else 0)
EOF

# ---------------------- 4. --json lines are JSON, whatever the file names
odd="$out/$(printf 'k\377\042q.pgm')" # byte 0xff and a quote
cp "$L" "$odd" || exit 99
json_ok() { # json_ok command...: every stdout line parses
    "$parvis" "$@" >"$out/stdout" 2>"$out/stderr" || fail "parvis $* failed: $(cat "$out/stderr")"
    [ -s "$out/stdout" ] || fail "parvis $* printed nothing"
    while IFS= read -r line; do
        printf '%s\n' "$line" | python3 -m json.tool >/dev/null 2>&1 ||
            fail "parvis $*: not JSON: $line"
    done <"$out/stdout"
    # json.tool reads undecodable bytes through; JSON text must be UTF-8
    python3 -c 'import sys
try:
    open(sys.argv[1], "rb").read().decode("utf-8")
except UnicodeDecodeError as error:
    sys.exit(f"not UTF-8: {error}")' "$out/stdout" || fail "parvis $*: the output is not UTF-8"
}
json_ok sift "$odd" "$L" -o "$out/m/{}.txt" --preset fast --backend cpu --json
# the name's undecodable byte became U+FFFD, the quote stayed a quote
python3 -c 'import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", errors="replace")
names = [json.loads(line)["image"] for line in text.splitlines()]
sys.exit(0 if names[0].endswith("k\ufffd\"q.pgm") and names[1].endswith("left.pgm") else 1)' \
    "$out/stdout" || fail "sift --json: the image names are not as expected: $(cat "$out/stdout")"
json_ok stereo "$L" "$R" --ndisp 16 --backend cpu --json
json_ok phasecorr "$L" "$L" --backend cpu --json
json_ok ncc "$L" "$L" --backend cpu --json
json_ok $OCT --json
json_ok $FLOW --json

# -------------- 5. --time on every command that runs an operation
time_ok() { # time_ok command...: succeeds and prints a time in ms
    "$parvis" "$@" --time >"$out/stdout" 2>"$out/stderr" ||
        fail "parvis $* --time failed: $(cat "$out/stderr")"
    grep -q "[0-9] ms" "$out/stdout" "$out/stderr" || fail "parvis $* --time printed no time"
}
time_ok stereo "$L" "$R" --ndisp 16 --backend cpu
time_ok phasecorr "$L" "$L" --backend cpu
time_ok ncc "$L" "$L" --backend cpu
time_ok $FLOW
time_ok sift "$L" --preset fast --backend cpu
time_ok match "$L" "$R" --preset fast --backend cpu
time_ok $OCT -o "$out/m/s.csv"
grep -q "^octreg: .* ms" "$out/stdout" || fail "octreg -o --time: the time is not on stdout"
# without -o the CSV is on stdout: the time goes to stderr, the CSV stays clean
"$parvis" $OCT --time >"$out/stdout" 2>"$out/stderr" || fail "octreg --time failed"
grep -q "^octreg: .* ms" "$out/stderr" || fail "octreg --time (CSV on stdout): no time on stderr"
grep -qv "^bscan,\|^[0-9]" "$out/stdout" && fail "octreg --time mixed the time into the CSV"

# ------------------------- the same outputs from the OpenCL backend
# stereo SAD on both backends: outputs in place, one JSON line each, and the
# share of valid pixels within PV_TOL_SAD_DIFFERING_SHARE (0.001: window
# costs summed in another order may pick another of two equal winners)
if "$parvis" devices 2>/dev/null | grep -q "OpenCL devices: [1-9]"; then
    for backend in cpu opencl; do
        rm -f "$out/m/"*
        json_ok stereo "$L" "$R" --ndisp 16 --lr-check --backend $backend --json \
            -o "$out/m/d.pfm" --png "$out/m/d.png"
        sed -n 's/.*"valid_fraction": \([0-9.]*\).*/\1/p' "$out/stdout" >"$out/valid-$backend"
        left=$(ls -A "$out/m" | tr '\n' ' ')
        [ "$left" = "d.pfm d.png " ] || fail "stereo on $backend left '$left'"
        rm -f "$out/m/"*
        run_missing d.png stereo "$L" "$R" --ndisp 16 --backend $backend -o "$out/m/d.pfm" \
            --png "$out/missing/d.png"
    done
    awk -v a="$(cat "$out/valid-cpu")" -v b="$(cat "$out/valid-opencl")" \
        'BEGIN { d = a - b; exit !(a > 0.5 && d <= 0.001 && d >= -0.001) }' ||
        fail "stereo valid share: cpu $(cat "$out/valid-cpu"), opencl $(cat "$out/valid-opencl")"
else
    echo "no OpenCL device: CPU only"
fi

[ "$fails" -eq 0 ] || exit 1
echo "all CLI output checks passed"
