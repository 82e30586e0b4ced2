#!/bin/sh
# parvis params: the library's parameter declarations through the CLI, and
# the options made from them agreeing with them.  Checks: `parvis params
# --json` is valid JSON listing every operation with its parameters;
# `parvis params sgm` prints only SGM; an unknown operation is refused;
# every option made from a declaration (stereo's SGM and BP options, sift's,
# match's, flow's and octreg's) shows in its command's --help the
# declaration's help, range and default; a value outside a declaration is
# refused with the library's message, naming the range.
set -u

out=tests/tmp/cli_params
mkdir -p "$out" || exit 99
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || { echo "SKIP: no $PYTHON"; exit 77; }
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

./parvis params --json > "$out/params.json" || fail "parvis params --json exited $?"
for command in stereo sift match flow octreg; do
    ./parvis $command --help > "$out/$command-help.txt" || fail "parvis $command --help exited $?"
done
"$PYTHON" - "$out" <<'PY' || fail "declarations and --help disagree"
import json, sys
out = sys.argv[1]
ops = {op["name"]: op for op in json.load(open(f"{out}/params.json"))}
want = {"sad", "bp", "sgm", "sift", "match", "ransac", "phasecorr", "octreg", "flow"}
assert set(ops) == want, f"operations {sorted(ops)}"
for op in ops.values():
    assert op["params"], op["name"]
    for p in op["params"]:
        assert p["min"] <= p["default"] <= p["max"], (op["name"], p)
        assert p["help"], (op["name"], p["name"])
# The options made from the declarations (cli_declared): command, method
# (stereo's), operation, fields.
made = [("stereo", "sgm", "sgm", ("p1", "p2", "paths", "p2_adaptive", "median")),
        ("stereo", "bp", "bp", ("levels", "iterations", "lambda", "data_max", "sigma",
                                "tile_padding", "message_update", "message_precision")),
        ("sift", None, "sift", ("first_octave", "octaves", "levels", "peak_thresh",
                                "edge_thresh", "max_keypoints")),
        ("match", None, "match", ("ratio", "mutual")),
        ("flow", None, "flow", ("beta", "warps", "iterations", "tolerance", "check_every",
                                "spacing")),
        ("octreg", None, "octreg", ("subpixel", "stripes", "batch"))]
for command, method, op, names in made:
    text = open(f"{out}/{command}-help.txt").read()
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  --")}
    declared = {p["name"]: p for p in ops[op]["params"]}
    for name in names:
        p = declared[name]
        flag = p["type"] == "bool" and p["default"] == 1
        option = ("--no-" if flag else "--") + name.replace("_", "-")
        line = lines.get(option)
        assert line, f"{option} missing from {command} --help"
        assert p["help"] in line, (option, line)
        if method:
            assert f"--method {method}]" in line, (option, line)
        if p["type"] == "int":
            assert f"{p['min']:.17g}..{p['max']:.17g}" in line, (option, line)
            assert f"default {p['default']:g}" in line, (option, line)
        if p["type"] == "real":
            assert f"default {p['default']:g}" in line, (option, line)
        if p["type"] == "choice":
            names_ = "|".join(c.split("=")[0] for c in p["choices"].split("|"))
            value = {int(c.split("=")[1]): c.split("=")[0] for c in p["choices"].split("|")}
            assert f"[{names_}; default {value[int(p['default'])]};" in line, (option, line)
PY

./parvis params sgm > "$out/sgm.txt" || fail "parvis params sgm exited $?"
grep -q '^sgm (stereo, pv_sgm_params)' "$out/sgm.txt" || fail "params sgm: no header"
grep -q '^sad ' "$out/sgm.txt" && fail "params sgm lists sad"
if ./parvis params nosuch > /dev/null 2> "$out/err.txt"; then
    fail "params nosuch succeeded"
elif ! grep -q "no operation named 'nosuch'" "$out/err.txt"; then
    fail "params nosuch: $(cat "$out/err.txt")"
fi
srcdir=${srcdir:-$(dirname "$0")/..}
pair="$srcdir/tests/data/stereo/tsukuba/left.pgm $srcdir/tests/data/stereo/tsukuba/right.pgm"
# shellcheck disable=SC2086
if ./parvis stereo $pair --method sgm --ndisp 16 --backend cpu --p2 70000 -o "$out/d.pfm" \
        2> "$out/err2.txt"; then
    fail "--p2 70000 accepted"
elif ! grep -q "p2 70000 is out of range (in 0..65535)" "$out/err2.txt"; then
    fail "--p2 70000: $(cat "$out/err2.txt")"
fi
[ -e "$out/d.pfm" ] && fail "--p2 70000 left an output"
[ "$fails" -eq 0 ] && echo "PASS: parvis params" || exit 1
