#!/bin/sh
# The peers script and the report: bench/peers/peers.py times a few quick
# cases (one run, no warm-up) with whatever peers this Python has, its JSON
# must parse and hold rows; bench/report.py then joins them with a
# hand-written parvis-bench JSON.  Each check that needs one peer runs only
# when that peer is there, and says so when it is not: OpenCV (cv2) times
# SAD stereo, 2D phase correlation and NCC; scikit-image 2D phase
# correlation and NCC.  Skipped (77) without a Python that has numpy and
# one of them, unless the VLFeat peer (C, no Python peer needed) is built.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
out=tests/tmp/peers
mkdir -p "$out" || exit 99

# The Python with numpy and the most of cv2 and skimage, first found wins a
# tie: $PYTHON alone when it is set, else python3 on the PATH, then the
# system's (where the distribution's packages install).  probe_peers prints
# "COUNT CV2 SKIMAGE" (0/1 each).
probe_peers() {
    "$1" -c 'import importlib.util as u, sys
if not u.find_spec("numpy"):
    sys.exit(1)
def usable(name):
    try:
        __import__(name)
        return 1
    except Exception:
        return 0
cv2, ski = usable("cv2"), usable("skimage")
print(cv2 + ski, cv2, ski)' 2>/dev/null
}
PYTHON_FOUND=
best=-1
HAVE_CV2=0
HAVE_SKIMAGE=0
for candidate in ${PYTHON:-python3 /usr/bin/python3}; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    found=$(probe_peers "$candidate") || continue
    # shellcheck disable=SC2086
    set -- $found
    if [ "$1" -gt "$best" ]; then
        best=$1 HAVE_CV2=$2 HAVE_SKIMAGE=$3 PYTHON_FOUND=$candidate
    fi
done
vlfeat=bench/peers/vlfeat_sift_peer
[ -x "$vlfeat" ] || vlfeat=
if [ -z "$PYTHON_FOUND" ]; then
    echo "SKIP: no Python with numpy (tried ${PYTHON:-python3 /usr/bin/python3})"
    exit 77
fi
if [ "$best" -eq 0 ] && [ -z "$vlfeat" ]; then
    echo "SKIP: $PYTHON_FOUND has numpy but neither OpenCV (cv2) nor scikit-image, and the VLFeat peer is not built"
    exit 77
fi
PYTHON=$PYTHON_FOUND
yes_no() {
    if [ "$1" = 1 ] || { [ "$1" != 0 ] && [ -n "$1" ]; }; then echo yes; else echo no; fi
}
echo "using $PYTHON: OpenCV $(yes_no "$HAVE_CV2"), scikit-image $(yes_no "$HAVE_SKIMAGE")," \
    "VLFeat peer $(yes_no "$vlfeat")"

note() {
    echo "note: $*"
}

fail() {
    echo "FAIL: $*"
    exit 1
}

files=
if [ "$best" -gt 0 ]; then
    "$PYTHON" "$srcdir/bench/peers/peers.py" --quick --runs 1 --warmup 0 --budget 10 \
        --data "$srcdir/tests/data" --case tsukuba --case pc2d --case t64 \
        --vlfeat /nonexistent --json "$out/peers.json" || fail "peers.py exited $?"

    "$PYTHON" - "$out/peers.json" "$HAVE_CV2" "$HAVE_SKIMAGE" <<'EOF' || fail "peers JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
have_cv2, have_skimage = sys.argv[2] == "1", sys.argv[3] == "1"
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
peers = {r["peer"].split("-")[0] for r in rows}
# each peer present times its cases, an absent one none
assert ("opencv" in peers) == have_cv2, (peers, have_cv2)
assert ("skimage" in peers) == have_skimage, (peers, have_skimage)
if have_cv2:
    assert any(r["op"] == "sad" and r["peer"] == "opencv" for r in rows), rows
for peer in peers:
    assert {"pc2d", "ncc"} <= {r["op"] for r in rows if r["peer"].startswith(peer)}, (peer, rows)
assert "machine" in doc and "python" in doc["machine"]
print("peers: %d rows from %s" % (len(rows), ", ".join(sorted(peers))))
EOF
    files="$out/peers.json"
else
    note "no OpenCV or scikit-image in $PYTHON: the quick peer cases are not run"
fi

if [ -n "$vlfeat" ]; then
    "$PYTHON" "$srcdir/bench/peers/peers.py" --runs 1 --warmup 0 --data "$srcdir/tests/data" \
        --case sift-720p --peer vlfeat --vlfeat "$vlfeat" --json "$out/vlfeat.json" ||
        fail "peers.py (VLFeat) exited $?"
    "$PYTHON" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["peers"]
assert len(rows) == 1 and rows[0]["peer"] == "vlfeat" and rows[0]["keypoints"] > 0, rows' \
        "$out/vlfeat.json" || fail "VLFeat row"
    files="$files $out/vlfeat.json"
else
    note "the VLFeat peer is not built (no libvlfeat-dev at configure time): its SIFT row is not checked"
fi

# Correct matches under known homographies (docs/sift.md): on the Tsukuba
# pairs parvis's defaults must keep up with OpenCV and VLFeat
# (bench/peers/sift_accuracy.py --check states the shares).
if [ "$HAVE_CV2" = 1 ] && [ -n "$vlfeat" ] && [ -x ./parvis ]; then
    "$PYTHON" "$srcdir/bench/peers/sift_accuracy.py" --build . --data "$srcdir/tests/data/stereo" \
        --photos tsukuba --check --json "$out/sift-accuracy.json" >/dev/null ||
        fail "sift_accuracy.py --check: parvis's defaults fell behind a peer (or it failed)"
else
    note "OpenCV or the VLFeat peer is missing: the correct-match check is not run"
fi

# shellcheck disable=SC2086
"$PYTHON" "$srcdir/bench/report.py" "$srcdir/tests/data/bench/parvis-sample.json" $files \
    --markdown "$out/report.md" --json "$out/joined.json" >/dev/null || fail "report.py exited $?"
if [ "$HAVE_CV2" = 1 ]; then
    grep -q '^| tsukuba | 10.0 | 1.00 |' "$out/report.md" || fail "no joined tsukuba row"
else
    note "no OpenCV in $PYTHON: the joined SAD (tsukuba) row is not checked"
fi
if [ "$best" -gt 0 ]; then
    grep -q '^## 2D phase correlation' "$out/report.md" || fail "no pc2d table"
    "$PYTHON" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["joined"]
assert any(r["case"] == "512^2 t64 vkfft" and r.get("ratio_cpu") for r in rows), rows' "$out/joined.json" ||
        fail "joined JSON"
fi
echo "PASS"
