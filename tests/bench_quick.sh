#!/bin/sh
# parvis-bench --quick: every operation's small case on the CPU backend and
# the OpenCL device (PoCL in CI).  Fails when the bench fails, including a
# cross-check below its threshold (exit status 1); then checks the JSON
# record against the schema of docs/bench-json.md and the CSV's shape.
set -u

srcdir=${srcdir:-$(dirname "$0")/..}
PYTHON=${PYTHON:-python3}
out=tests/tmp/bench
mkdir -p "$out" || exit 99

fail() {
    echo "FAIL: $*"
    exit 1
}

start=$(date +%s)
./parvis-bench --quick --data "$srcdir/tests/data" --json "$out/quick.json" \
    --csv "$out/quick.csv" || fail "parvis-bench --quick exited $?"
echo "parvis-bench --quick took $(( $(date +%s) - start )) s"

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "SKIP: no $PYTHON to check the JSON schema"
    exit 77
fi

"$PYTHON" - "$out/quick.json" "$out/quick.csv" <<'EOF' || fail "JSON/CSV schema"
import csv, json, sys

doc = json.load(open(sys.argv[1]))

def need(obj, key, kinds, where):
    assert key in obj, "%s: no %r" % (where, key)
    assert isinstance(obj[key], kinds), "%s: %r is %r" % (where, key, obj[key])
    return obj[key]

number = (int, float)
text = (str,)
maybe_text = (str, type(None))
maybe_number = (int, float, type(None))

assert need(doc, "schema", text, "top") == "parvis-bench/1"
need(doc, "parvis_version", text, "top")
host = need(doc, "host", dict, "top")
need(host, "cpu_model", text, "host")
need(host, "online_cpus", int, "host")
cpu = need(doc, "cpu_backend", dict, "top")
need(cpu, "device", text, "cpu_backend")
assert need(cpu, "threads", int, "cpu_backend") >= 1
for key in ("copy_bandwidth_gbs", "float_peak_gflops", "int_peak_gops"):
    need(cpu, key, maybe_number, "cpu_backend")
opencl = need(doc, "opencl", (dict, type(None)), "top")
if opencl is not None:
    for key in ("device", "platform", "vendor", "driver_version", "opencl_version", "type"):
        need(opencl, key, maybe_text, "opencl")
    for key in ("copy_bandwidth_gbs", "float_peak_gflops", "int_peak_gops"):
        need(opencl, key, maybe_number, "opencl")
assert need(doc, "selection", text, "top") == "quick"
runs = need(doc, "runs", int, "top")
need(doc, "warmup", int, "top")
cpu_runs = need(doc, "cpu_runs", int, "top")
need(doc, "cpu_warmup", int, "top")
assert need(doc, "min_time_ms", number, "top") == 0
all_passed = need(doc, "all_passed", bool, "top")
results = need(doc, "results", list, "top")
assert results, "no results"

def check_backend(b, where, samples_expected):
    median = need(b, "median", dict, where)
    for key in ("total_ms", "kernel_ms", "upload_ms", "download_ms"):
        need(median, key, maybe_number, where + ".median")
    assert median["total_ms"] > 0, where
    samples = need(b, "samples", list, where)
    assert len(samples) == samples_expected, (where, len(samples), samples_expected)
    for s in samples:
        for key in ("total_ms", "kernel_ms", "upload_ms", "download_ms"):
            need(s, key, number, where + ".samples")

passes = True
for r in results:
    where = "%s %s" % (r.get("op"), r.get("case"))
    for key in ("op", "case", "params", "variant"):
        need(r, key, text, where)
    need(r, "size", number, where)
    need(r, "fft_engine", maybe_text, where)
    need(r, "cpu_threads", int, where)
    need(r, "cpu_ms", number, where)
    samples = runs
    # large cases time the CPU backend once; the quick suite has none
    check_backend(need(r, "cpu", dict, where), where + ".cpu", cpu_runs)
    have_cl = r["opencl"] is not None
    if have_cl:
        check_backend(need(r, "opencl", dict, where), where + ".opencl", samples)
        for key in ("opencl_kernel_ms", "opencl_total_ms", "speedup_kernel", "speedup_total",
                    "agreement"):
            need(r, key, number, where)
    threshold = need(r, "threshold", number, where)
    checked = need(r, "checked", bool, where)
    ok = need(r, "pass", bool, where)
    assert checked == (have_cl and threshold > 0), where
    if checked:
        assert ok == (r["agreement"] >= threshold), where
    passes = passes and ok
    need(r, "roofline_bytes", number, where)
    need(r, "roofline_fraction", maybe_number, where)
    # both limits: the compute fraction beside the bytes', and which binds
    # (the one nearer its limit, as the two share the measured time)
    compute_ops = need(r, "compute_ops", maybe_number, where)
    kind = need(r, "ops_kind", maybe_text, where)
    assert (kind is None) == (compute_ops is None), where
    assert kind in (None, "float", "int"), (where, kind)
    compute = need(r, "compute_fraction", maybe_number, where)
    memory = r["roofline_fraction"]
    bound = need(r, "bound", maybe_text, where)
    need(r, "cpu_compute_fraction", maybe_number, where)
    need(r, "cpu_bound", maybe_text, where)
    if memory is None and compute is None:
        assert bound is None, where
    else:
        expect = "compute" if (compute or 0) > (memory or 0) else "memory"
        assert bound == expect, (where, bound, memory, compute)
    quality = need(r, "quality", (dict, type(None)), where)
    if quality is not None:
        need(quality, "metric", text, where)
    if r["op"] in ("pc2d", "pc3d", "pcm", "ncc", "ncc-batch", "fft"):
        engines = ("clfft", "vkfft") if have_cl else ("fftw",)
        assert r["fft_engine"] in engines, (where, r["fft_engine"])
    # SIFT detection rows report their cost per keypoint (the counts in
    # params, the times the row's medians); no other row has per_item
    if r["op"] == "sift" and " kp" in r["params"]:
        items = need(r, "per_item", dict, where)
        assert items["item"] == "keypoint", (where, items)
        count = items["cpu_count"]
        assert count > 0 and ("%d kp" % count) in r["params"], (where, items, r["params"])
        assert abs(items["cpu_ns"] - r["cpu_ms"] * 1e6 / count) <= 1e-6 * items["cpu_ns"], where
        if have_cl:
            count = items["opencl_count"]
            assert count > 0, (where, items)
            less_upload = r["opencl_total_ms"] - r["opencl_upload_ms"]
            for key, ms in (("opencl_kernel_ns", r["opencl_kernel_ms"]),
                            ("opencl_total_ns", r["opencl_total_ms"]),
                            ("opencl_total_less_upload_ns", less_upload)):
                assert abs(items[key] - ms * 1e6 / count) <= 1e-6 * items[key], (where, key)
            assert " ns/kp (kernels " in r["params"], (where, r["params"])
    else:
        assert "per_item" not in r, where
assert passes == all_passed

ops = {r["op"] for r in results}
for op in ("sad", "bp", "sgm", "pc2d", "pc3d", "pcm", "ncc", "ncc-masked", "ncc-batch",
           "octreg", "flow", "sift", "match"):
    assert op in ops, "the quick suite lacks %s" % op
    assert any(r["compute_ops"] for r in results if r["op"] == op), "%s counts no operations" % op

rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(results), (len(rows), len(results))
for row, r in zip(rows, results):
    assert row["op"] == r["op"] and row["case"] == r["case"], (row, r["case"])
    assert row["check"] in ("pass", "FAIL"), row
    assert row["bound"] == (r["bound"] or ""), (row["bound"], r["bound"])
print("bench JSON: %d rows, %d ops, schema ok" % (len(results), len(ops)))
EOF

# --cpu-runs / --cpu-warmup: the CPU backend's own repetitions, recorded in
# the JSON, with the OpenCL side keeping --runs.
./parvis-bench --case venus-paper --runs 3 --warmup 1 --cpu-runs 1 --cpu-warmup 0 \
    --data "$srcdir/tests/data" --json "$out/cpu-runs.json" > "$out/cpu-runs.txt" 2>&1 ||
    fail "parvis-bench --cpu-runs exited $?"
"$PYTHON" - "$out/cpu-runs.json" <<'EOF' || fail "--cpu-runs JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert (doc["runs"], doc["warmup"], doc["cpu_runs"], doc["cpu_warmup"]) == (3, 1, 1, 0), doc["runs"]
assert doc["results"], "no rows"
for r in doc["results"]:
    assert len(r["cpu"]["samples"]) == 1, (r["case"], len(r["cpu"]["samples"]))
    if r["opencl"] is not None:
        assert len(r["opencl"]["samples"]) == 3, (r["case"], len(r["opencl"]["samples"]))
print("--cpu-runs: %d rows, 1 CPU sample and 3 OpenCL samples each" % len(doc["results"]))
EOF

# --min-time: an OpenCL series goes on past --runs until its end-to-end
# times add up to the minimum (or the series holds 100 samples); the CPU
# backend keeps its runs.  A negative minimum is refused before any run.
./parvis-bench --case venus-paper --runs 2 --warmup 0 --min-time 400 \
    --data "$srcdir/tests/data" --json "$out/min-time.json" > "$out/min-time.txt" 2>&1 ||
    fail "parvis-bench --min-time exited $?"
"$PYTHON" - "$out/min-time.json" <<'EOF' || fail "--min-time JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["min_time_ms"] == 400 and doc["runs"] == 2, (doc["min_time_ms"], doc["runs"])
rows = [r for r in doc["results"] if r["opencl"] is not None]
# a build without OpenCL has CPU rows only, which --min-time leaves alone
assert rows or doc["opencl"] is None, "an OpenCL device but no OpenCL rows"
for r in doc["results"]:
    assert len(r["cpu"]["samples"]) == 2, (r["case"], len(r["cpu"]["samples"]))
for r in rows:
    samples = [s["total_ms"] for s in r["opencl"]["samples"]]
    assert len(samples) >= 2, (r["case"], len(samples))
    # enough time or a full series, and no run past the minimum
    assert sum(samples) >= 400 or len(samples) == 100, (r["case"], sum(samples), len(samples))
    assert len(samples) == 2 or sum(samples[:-1]) < 400, (r["case"], samples)
print("--min-time: %d OpenCL rows, samples %s" % (len(rows), [len(r["opencl"]["samples"]) for r in rows]))
EOF
# --case =NAME: that case alone (sift-vga is also part of sift-batch-vga's
# and sift-batch16-vga's names); a name no case has is an error.
./parvis-bench --case =sift-vga --runs 1 --warmup 0 --cpu-runs 1 --cpu-warmup 0 \
    --data "$srcdir/tests/data" --json "$out/exact.json" > "$out/exact.txt" 2>&1 ||
    fail "parvis-bench --case =sift-vga exited $?"
"$PYTHON" - "$out/exact.json" <<'EOF' || fail "--case =sift-vga JSON"
import json, sys
cases = [r["case"] for r in json.load(open(sys.argv[1]))["results"]]
assert cases == ["sift-vga"], cases
print("--case =sift-vga: %s" % cases)
EOF
./parvis-bench --case =sift > "$out/exact-none.txt" 2>&1 && fail "--case =sift (no such case) exited 0"
grep -q "no case matches --case =sift" "$out/exact-none.txt" || fail "--case =sift: no message"
./parvis-bench --cold --case =sift > "$out/cold-none.txt" 2>&1 && fail "--cold --case =sift exited 0"
grep -q "no operation of --cold matches --case =sift" "$out/cold-none.txt" ||
    fail "--cold --case =sift: no message"

./parvis-bench --case venus-paper --min-time -1 > "$out/min-time-bad.txt" 2>&1
status=$?
[ "$status" != 0 ] || fail "--min-time -1 exited 0"
grep -q -- "--min-time" "$out/min-time-bad.txt" || fail "--min-time -1: no message naming the option"
echo "PASS"
