#!/bin/sh
# The peers script and the report: bench/peers/peers.py times a few quick
# cases (one run, no warm-up) with whatever peers this Python has, its JSON
# must parse and hold rows; bench/report.py then joins them with a
# hand-written parvis-bench JSON.  Skipped (77) without cv2 or skimage.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
out=tests/tmp/peers
mkdir -p "$out" || exit 99

# The first Python with numpy and cv2 or skimage: $PYTHON, python3 on the
# PATH, then the system's (where the distribution's packages install).
PYTHON_FOUND=
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import importlib.util as u, sys
sys.exit(0 if u.find_spec("numpy") and (u.find_spec("cv2") or u.find_spec("skimage")) else 1)' \
        >/dev/null 2>&1; then
        PYTHON_FOUND=$candidate
        break
    fi
done
if [ -z "$PYTHON_FOUND" ]; then
    echo "SKIP: no python3 with numpy and cv2 or skimage"
    exit 77
fi
PYTHON=$PYTHON_FOUND
echo "using $PYTHON"

fail() {
    echo "FAIL: $*"
    exit 1
}

"$PYTHON" "$srcdir/bench/peers/peers.py" --quick --runs 1 --warmup 0 --budget 10 \
    --data "$srcdir/tests/data" --case tsukuba --case pc2d --case t64 \
    --vlfeat /nonexistent --json "$out/peers.json" || fail "peers.py exited $?"

"$PYTHON" - "$out/peers.json" <<'EOF' || fail "peers JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["peers"]
assert rows, "no peer rows"
for r in rows:
    for key in ("op", "case", "peer", "path", "ms", "runs", "samples", "note"):
        assert key in r, (key, r)
    assert r["path"] in ("cpu", "opencl"), r
    assert r["ms"] > 0 and r["runs"] == len(r["samples"]) == 1, r
    # every peer here must find the planted answer
    if "quality" in r and r.get("quality_metric") == "exact":
        assert r["quality"] == 1.0, r
assert {r["op"] for r in rows} <= {"sad", "pc2d", "ncc"}, rows
assert "machine" in doc and "python" in doc["machine"]
print("peers: %d rows" % len(rows))
EOF

files="$out/peers.json"
vlfeat=bench/peers/vlfeat_sift_peer
if [ -x "$vlfeat" ]; then
    "$PYTHON" "$srcdir/bench/peers/peers.py" --runs 1 --warmup 0 --data "$srcdir/tests/data" \
        --case sift-720p --peer vlfeat --vlfeat "$vlfeat" --json "$out/vlfeat.json" ||
        fail "peers.py (VLFeat) exited $?"
    "$PYTHON" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["peers"]
assert len(rows) == 1 and rows[0]["peer"] == "vlfeat" and rows[0]["keypoints"] > 0, rows' \
        "$out/vlfeat.json" || fail "VLFeat row"
    files="$files $out/vlfeat.json"
fi

# shellcheck disable=SC2086
"$PYTHON" "$srcdir/bench/report.py" "$srcdir/tests/data/bench/parvis-sample.json" $files \
    --markdown "$out/report.md" --json "$out/joined.json" >/dev/null || fail "report.py exited $?"
grep -q '^| tsukuba | 10.0 | 1.00 |' "$out/report.md" || fail "no joined tsukuba row"
grep -q '^## 2D phase correlation' "$out/report.md" || fail "no pc2d table"
"$PYTHON" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["joined"]
assert any(r["case"] == "512^2 t64 vkfft" and r.get("ratio_cpu") for r in rows), rows' "$out/joined.json" ||
    fail "joined JSON"
echo "PASS"
