#!/bin/sh
# parvis params: the library's parameter declarations through the CLI, and
# the options made from them agreeing with them.  Checks: `parvis params
# --json` is valid JSON listing every operation with its parameters;
# `parvis params sgm` prints only SGM; an unknown operation is refused;
# every option that sets a declared parameter (stereo, sift, match, phasecorr,
# octreg, flow) shows in --help the declaration's help, range and default,
# except those listed with their reason; a value outside a declaration is
# refused with the library's message, naming the range.  Consistency: every
# option `parvis --help` names is in its command's --help; --time is the same
# flag everywhere; a missing output folder is named with its cause by stereo,
# sift and match alike; phasecorr --upsample takes the declared range.
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
for command in stereo sift match phasecorr octreg flow; do
    ./parvis $command --help > "$out/$command-help.txt" || fail "parvis $command --help exited $?"
done
"$PYTHON" - "$out/params.json" "$out" <<'PY' || fail "declarations and --help disagree"
import json, sys
ops = {op["name"]: op for op in json.load(open(sys.argv[1]))}
want = {"sad", "bp", "sgm", "sift", "match", "ransac", "phasecorr", "phasecorr_masked",
        "octreg", "flow"}
assert set(ops) == want, f"operations {sorted(ops)}"
for op in ops.values():
    assert op["params"], op["name"]
    for p in op["params"]:
        assert p["min"] <= p["default"] <= p["max"], (op["name"], p)
        assert p["help"], (op["name"], p["name"])

# operation -> the command whose options set its parameters
COMMAND = {"sad": "stereo", "bp": "stereo", "sgm": "stereo", "sift": "sift",
           "match": "match", "ransac": "match", "phasecorr": "phasecorr",
           "phasecorr_masked": "phasecorr",
           "octreg": "octreg", "flow": "flow"}
# options in the command's own form, not the declaration's, each with its reason
# (the option's name stands for several operations' parameters, or for none)
OWN_FORM = {
    ("stereo", "--ndisp"): "shared by the methods: per-method defaults from the declarations",
    ("stereo", "--min-disp"): "shared by the methods",
    ("stereo", "--uniqueness"): "one option for sad's margin and sgm's ratio",
    ("stereo", "--disc-max"): "bp: the command's default grows with --ndisp",
    ("stereo", "--memory-budget"): "sgm's, with K/M/G suffixes; bp has no such option",
    ("flow", "--alpha"): "default per dimension (images: pv_flow_params_default_2d)",
    ("flow", "--rho"): "default per dimension",
    ("flow", "--kernel-size"): "default per dimension",
    ("flow", "--levels"): "default per dimension, fitted to the image",
    ("sgm", "lr_max_diff"): "--lr-max-diff is sad's declaration; sgm's integer check in "
                            "cli_sgm_finish",
}
def option_names(p):
    flag = p["name"].replace("_", "-")
    if p["type"] == "bool":
        return ["--no-" + flag] if p["default"] else ["--" + flag]
    return ["--" + flag]

def expected_range(p):
    if p["type"] == "choice":
        return "|".join(c.split("=")[0] for c in p["choices"].split("|"))
    if p["type"] == "int" and p["max"] >= 9e15:
        return f">= {p['min']:.17g}"
    if p["type"] == "int":
        return f"{p['min']:.17g}..{p['max']:.17g}"
    lower = ">" if p["min_exclusive"] else ">="
    if p["max"] >= 1e30:
        return f"{lower} {p['min']:g}"
    if p["min_exclusive"]:
        return f"> {p['min']:g} and <= {p['max']:g}"
    return f"{p['min']:g}..{p['max']:g}"

def expected_default(p):
    if p["type"] == "choice":
        for c in p["choices"].split("|"):
            name, value = c.split("=")
            if float(value) == p["default"]:
                return name
    return f"{p['default']:g}"

# the default a command shows where its structure starts from other values
# than the declaration's (flow 2D: pv_flow_params_default_2d)
SHOWN_DEFAULT = {}

problems, checked = [], 0
for op_name, op in ops.items():
    command = COMMAND[op_name]
    text = open(f"{sys.argv[2]}/{command}-help.txt").read()
    lines = {}
    for l in text.splitlines():  # the options come first, the conventions' text after
        if l.startswith("  --"):
            lines.setdefault(l.split()[0], l)
    for p in op["params"]:
        for option in option_names(p):
            line = lines.get(option)
            if line is None or (command, option) in OWN_FORM or (op_name, p["name"]) in OWN_FORM:
                continue
            checked += 1
            if p["help"] not in line:
                problems.append(f"{command} {option}: help is not {op_name}.{p['name']}'s")
                continue
            if p["type"] != "bool":
                if f"[{expected_range(p)};" not in line:
                    problems.append(f"{command} {option}: range not [{expected_range(p)}: {line}")
                default = SHOWN_DEFAULT.get((op_name, p["name"]), expected_default(p))
                if f"default {default}" not in line:
                    problems.append(f"{command} {option}: default not {default}: {line}")
# stereo's shared options print each method's declared default
stereo_help = open(f"{sys.argv[2]}/stereo-help.txt").read()
for param in ("ndisp", "uniqueness"):
    defaults = []
    for method in ("sad", "bp", "sgm"):
        for p in ops[method]["params"]:
            if p["name"] == param:
                defaults.append(f"{method} {p['default']:g}")
    text = "; default: " + ", ".join(defaults) + " ["
    line = [l for l in stereo_help.splitlines() if l.startswith(f"  --{param} ")][0]
    if text not in line:
        problems.append(f"stereo --{param}: not '{text}': {line}")
assert checked >= 20, f"only {checked} declared options found in --help"
assert not problems, "\n".join(problems)
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

# consistency by construction: every option that `parvis --help` names is one
# its command's --help lists (the usage cannot drift from the tables)
./parvis --help > "$out/usage.txt" || fail "parvis --help exited $?"
for command in devices stereo phasecorr ncc flow synth-flow sift match tune octreg synth-oct \
    params version; do
    ./parvis $command --help > "$out/own-$command.txt" || fail "parvis $command --help exited $?"
done
"$PYTHON" - "$out" <<'PY' || fail "parvis --help names options its commands do not take"
import re, sys
usage = open(f"{sys.argv[1]}/usage.txt").read().split("\n\n")[1]  # the commands' block
named, command = {}, None
for line in usage.splitlines()[1:]:
    if re.match(r"  [a-z]", line):
        command = line.split()[0]
    for option in re.findall(r"--[a-z0-9][a-z0-9-]*", line):
        named.setdefault(command, set()).add(option)
assert len(named) >= 8, f"too few commands in parvis --help: {sorted(named)}"
problems = []
for command, options in named.items():
    listed = open(f"{sys.argv[1]}/own-{command}.txt").read()
    for option in sorted(options):
        if not re.search(rf"^  {re.escape(option)}( |$)", listed, re.M):
            problems.append(f"parvis --help names {command} {option}, not in its --help")
assert not problems, "\n".join(problems)
PY

# --time: one flag, the same help, in every command that runs an operation
for command in stereo sift match phasecorr ncc octreg flow; do
    ./parvis $command --help | grep -qF -- "--time                   print the time the library's calls took" ||
        fail "$command --help lacks the shared --time"
done

# a missing output folder: every command names the path and the cause alike
# shellcheck disable=SC2086
set -- $pair
for run in "stereo $1 $2 --backend cpu --ndisp 16 -o $out/missing/dir/d.pfm" \
    "sift $1 --backend cpu -o $out/missing/dir/k.txt" \
    "match $1 $2 --backend cpu -o $out/missing/dir/m.txt"; do
    # shellcheck disable=SC2086
    if ./parvis $run > /dev/null 2> "$out/err3.txt"; then
        fail "parvis $run succeeded"
    elif ! grep -qF "cannot write '$out/missing/dir/" "$out/err3.txt" ||
        ! grep -qF "No such file or directory" "$out/err3.txt"; then
        fail "parvis $run: $(cat "$out/err3.txt")"
    fi
done

# phasecorr --upsample: the declared range (2..10000); 1 refused by the library
# shellcheck disable=SC2086
if ./parvis phasecorr $pair --backend cpu --upsample 1 > /dev/null 2> "$out/err4.txt"; then
    fail "phasecorr --upsample 1 accepted"
elif ! grep -qF "upsample 1 is out of range (in 2..10000)" "$out/err4.txt"; then
    fail "phasecorr --upsample 1: $(cat "$out/err4.txt")"
fi
./parvis phasecorr --help | grep -qF -- "--subpixel none (the default: the integer peak)" ||
    fail "phasecorr --help does not say how to ask for the integer peak"
[ "$fails" -eq 0 ] && echo "PASS: parvis params" || exit 1
