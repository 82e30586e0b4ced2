#!/usr/bin/env python3
"""A regression gate for the OpenCL device: headline rows against a reference.

``make`` runs the headline rows with parvis-bench and writes a reference:
per row the OpenCL kernel and end-to-end medians and the noise of each,
measured as the spread of that row's timed runs ((slowest - fastest) /
median, at least 10 %).  ``compare`` runs the same rows again (or reads a
run's JSON with ``--current``) and lists every row slower than the reference
by more than its noise, kernels and end to end separately; it exits 1 when
any is listed.  Rows found slower are run again in new processes
(``--retries``, default 2) and judged by their best median, since small
rows' end-to-end times move between processes more than within one.  A reference names the device model it was measured on and is
refused for another model unless ``--force`` is given.  Without an explicit
reference, ``compare`` looks in bench/reference/ for the file of the device
found and refuses clearly when there is none.

    python3 bench/gate.py make --bench _build/parvis-bench \\
        --out bench/reference/nvidia-h200.json
    python3 bench/gate.py compare --bench _build/parvis-bench

``join`` puts together references made of disjoint selectors (for example
one bench call per part, each inside a time limit) into one.  ``widen``
raises a reference's noise to the spread that later runs of the same tree
showed (their parvis-bench JSON, kept by ``compare --keep-json``).
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

SCHEMA = "parvis-gate/1"
MIN_NOISE = 0.10
REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
# The README's headline operations, each one parvis-bench --case selector.
HEADLINE = ["bp", "sad", "sgm", "=sift-1080p", "pc3d", "octreg", "flow"]
MEASURES = ("kernel_ms", "total_ms")


class GateError(Exception):
    """A reference or run that cannot be compared (the message says why)."""


def device_slug(name: str) -> str:
    """The reference file's stem for a device name: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown"


def spread(samples: List[float], median: float) -> float:
    """The relative spread of one row's runs, at least MIN_NOISE."""
    if not samples or median <= 0:
        return MIN_NOISE
    return max(MIN_NOISE, (max(samples) - min(samples)) / median)


def rows_of(bench: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The OpenCL rows of one parvis-bench JSON record, with their noise."""
    rows = []
    for result in bench.get("results", []):
        opencl = result.get("opencl")
        if not opencl:
            continue
        row: Dict[str, Any] = {"op": result["op"], "case": result["case"],
                               "params": result.get("params", "")}
        for measure in MEASURES:
            median = float(opencl["median"][measure])
            samples = [float(s[measure]) for s in opencl.get("samples", [])]
            row[measure] = median
            row[measure.replace("_ms", "_noise")] = round(spread(samples, median), 4)
        rows.append(row)
    return rows


def run_bench(bench: str, selectors: List[str], extra: List[str],
              keep: Optional[str] = None, name: str = "gate") -> Dict[str, Any]:
    """Run parvis-bench once per selector; one reference-shaped record.
    With keep, each run's own parvis-bench JSON is also written there
    (<name>-<n>.json), for the tables (bench/tables.py)."""
    if "--cpu-runs" not in extra:
        # The gate reads only the OpenCL side; one CPU run keeps the large
        # cases (flow 250^3 takes seconds on the CPU) to a few minutes.
        extra = extra + ["--cpu-runs", "1", "--cpu-warmup", "0"]
    record: Dict[str, Any] = {"schema": SCHEMA, "device": None, "rows": [],
                              "selectors": selectors, "bench_args": extra}
    with tempfile.TemporaryDirectory() as tmp:
        for i, selector in enumerate(selectors):
            path = os.path.join(tmp, f"run{i}.json")
            cmd = [bench, "--case", selector, "--json", path] + extra
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
            if not os.path.exists(path):
                raise GateError(f"{' '.join(cmd)} exited {done.returncode} without JSON")
            with open(path, encoding="utf-8") as f:
                merge(record, json.load(f), selector)
            if keep:
                os.makedirs(keep, exist_ok=True)
                shutil.copyfile(path, os.path.join(keep, f"{name}-{i}.json"))
    return record


def merge(record: Dict[str, Any], bench: Dict[str, Any],
          selector: Optional[str] = None) -> None:
    """Add one parvis-bench JSON record's rows and device to record (each
    row tagged with the selector that ran it, when known, for retries)."""
    opencl = bench.get("opencl")
    if not opencl or not opencl.get("device"):
        raise GateError("the run had no OpenCL device: nothing to gate")
    if record["device"] not in (None, opencl["device"]):
        raise GateError(f"runs on two devices: {record['device']} and {opencl['device']}")
    record["device"] = opencl["device"]
    record["parvis_version"] = bench.get("parvis_version")
    record["runs"] = bench.get("runs")
    rows = rows_of(bench)
    if selector is not None:
        for row in rows:
            row["selector"] = selector
    record["rows"].extend(rows)


def key(row: Dict[str, Any]) -> Tuple[str, str]:
    """A row's identity: its operation and case.  Not its params text, which
    carries measured figures (keypoint counts, pairs/s, precompute times)."""
    return (row["op"], row["case"])


def combine_rounds(rounds: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One reference from several rounds (separate bench processes): each
    row's median of the rounds' medians, and as its noise the larger of the
    in-process spread and the spread between the rounds, so that the
    variation between two processes (clocks, placement, the host's load)
    is inside the noise a later run is judged by."""
    record = dict(rounds[0])
    by_key: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for rnd in rounds:
        for row in rnd["rows"]:
            by_key.setdefault(key(row), []).append(row)
    rows = []
    for row in rounds[0]["rows"]:
        seen = by_key[key(row)]
        merged = dict(row)
        for measure in MEASURES:
            values = sorted(r[measure] for r in seen)
            median = values[len(values) // 2] if len(values) % 2 else \
                (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
            between = (values[-1] - values[0]) / median if median > 0 else 0.0
            noise_key = measure.replace("_ms", "_noise")
            merged[measure] = median
            merged[noise_key] = round(max([between] + [r[noise_key] for r in seen]), 4)
        rows.append(merged)
    record["rows"] = rows
    record["rounds"] = len(rounds)
    return record


def regressions(ref: Dict[str, Any], cur: Dict[str, Any]) -> Tuple[List[str], List[str]]:
    """(lines for rows slower than ref beyond their noise, reference rows not run)."""
    current = {key(r): r for r in cur["rows"]}
    slower, missing = [], []
    for row in ref["rows"]:
        now = current.get(key(row))
        if now is None:
            missing.append(f"{row['op']} {row['case']} ({row.get('params', '')})")
            continue
        for measure in MEASURES:
            noise = max(MIN_NOISE, float(row[measure.replace("_ms", "_noise")]))
            limit = row[measure] * (1 + noise)
            if now[measure] > limit:
                slower.append(f"{row['op']} {row['case']} ({row.get('params', '')}) "
                              f"{measure}: {now[measure]:.3f} ms against {row[measure]:.3f} ms "
                              f"(+{100 * (now[measure] / row[measure] - 1):.0f} %, "
                              f"noise {100 * noise:.0f} %)")
    return slower, missing


def load_reference(path: Optional[str], device: str,
                   directory: str = REFERENCE_DIR) -> Tuple[str, Dict[str, Any]]:
    """The reference at path, or directory/<device>.json; GateError if none."""
    if path is None:
        path = os.path.join(directory, device_slug(device) + ".json")
        if not os.path.exists(path):
            raise GateError(f"no reference for the device '{device}' ({path} does not "
                            f"exist): make one with `bench/gate.py make` on that device")
    with open(path, encoding="utf-8") as f:
        ref = json.load(f)
    if ref.get("schema") != SCHEMA:
        raise GateError(f"{path} is not a {SCHEMA} reference")
    return path, ref


def cmd_make(args: argparse.Namespace) -> int:
    if args.rounds < 1:
        raise GateError(f"--rounds {args.rounds}: at least 1")
    rounds = [run_bench(args.bench, args.case or HEADLINE, shlex.split(args.bench_args or ""),
                        args.keep_json if r == 0 else None) for r in range(args.rounds)]
    record = combine_rounds(rounds)
    out = args.out or os.path.join(REFERENCE_DIR, device_slug(record["device"]) + ".json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"gate: {len(record['rows'])} rows on {record['device']} written to {out}")
    return 0


def join_references(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One reference from several made of disjoint selectors (one bench call
    per part, to stay inside a time limit per command).  The parts must come
    from one device model, with the same rounds and bench arguments, and may
    not share a row."""
    if not parts:
        raise GateError("join: no reference given")
    joined = dict(parts[0])
    joined["rows"], joined["selectors"] = [], []
    seen: Dict[Tuple[str, str], int] = {}
    for i, part in enumerate(parts):
        if part.get("schema") != SCHEMA:
            raise GateError(f"join: part {i + 1} is not a {SCHEMA} reference")
        for field in ("device", "rounds", "bench_args"):
            if part.get(field) != parts[0].get(field):
                raise GateError(f"join: part {i + 1} differs from part 1 in {field}: "
                                f"{part.get(field)!r} against {parts[0].get(field)!r}")
        for row in part["rows"]:
            if key(row) in seen:
                raise GateError(f"join: the row {row['op']} {row['case']} is in parts "
                                f"{seen[key(row)] + 1} and {i + 1}")
            seen[key(row)] = i
            joined["rows"].append(row)
        joined["selectors"].extend(part.get("selectors", []))
    return joined


def cmd_join(args: argparse.Namespace) -> int:
    parts = []
    for path in args.parts:
        with open(path, encoding="utf-8") as f:
            parts.append(json.load(f))
    record = join_references(parts)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"gate: {len(record['rows'])} rows from {len(parts)} parts written to {args.out}")
    return 0


def widen_reference(ref: Dict[str, Any], runs: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], int]:
    """ref with each row's noise raised to at least the spread between its
    median and the medians of later runs of the same tree on the same
    device (separate bench processes): the between-process variation a
    reference made of few rounds did not see.  Returns (the reference, the
    number of noise values raised)."""
    by_key: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for run in runs:
        if run["device"] != ref["device"]:
            raise GateError(f"widen: a run on '{run['device']}', the reference on "
                            f"'{ref['device']}'")
        for row in run["rows"]:
            by_key.setdefault(key(row), []).append(row)
    widened = dict(ref)
    widened["rows"] = []
    raised = 0
    for row in ref["rows"]:
        new = dict(row)
        for measure in MEASURES:
            values = [row[measure]] + [r[measure] for r in by_key.get(key(row), [])]
            spread_now = (max(values) - min(values)) / row[measure] if row[measure] > 0 else 0.0
            noise_key = measure.replace("_ms", "_noise")
            if spread_now > new[noise_key]:
                # rounded up, so that the runs themselves pass against it
                new[noise_key] = math.ceil(spread_now * 1e4) / 1e4
                raised += 1
        widened["rows"].append(new)
    widened["widened_by_runs"] = int(ref.get("widened_by_runs", 0)) + len(runs)
    return widened, raised


def cmd_widen(args: argparse.Namespace) -> int:
    with open(args.reference, encoding="utf-8") as f:
        ref = json.load(f)
    if ref.get("schema") != SCHEMA:
        raise GateError(f"{args.reference} is not a {SCHEMA} reference")
    runs = []
    for path in args.runs:
        with open(path, encoding="utf-8") as f:
            bench = json.load(f)
        record: Dict[str, Any] = {"device": None, "rows": []}
        merge(record, bench)
        runs.append(record)
    widened, raised = widen_reference(ref, runs)
    with open(args.out or args.reference, "w", encoding="utf-8") as f:
        json.dump(widened, f, indent=1)
        f.write("\n")
    print(f"gate: {raised} noise values raised from {len(runs)} runs")
    return 0


def best_of(cur: Dict[str, Any], again: Dict[str, Any]) -> Dict[str, Any]:
    """cur with each row's measures lowered to a later process's where that
    one was faster: the best of the processes' medians per row."""
    later = {key(r): r for r in again["rows"]}
    merged = dict(cur)
    merged["rows"] = []
    for row in cur["rows"]:
        new = dict(row)
        other = later.get(key(row))
        for measure in MEASURES:
            if other is not None and other[measure] < new[measure]:
                new[measure] = other[measure]
        merged["rows"].append(new)
    return merged


def retry_slower(args: argparse.Namespace, ref: Dict[str, Any], cur: Dict[str, Any],
                 extra: List[str]) -> Dict[str, Any]:
    """Rerun, in fresh bench processes, the selectors of the rows found
    slower, up to args.retries times, keeping each row's best median.  The
    end-to-end time of a small row moves between processes by more than
    its runs within one (host threads, placement, the host's other load:
    docs/benchmarks.md), and a row is judged on one process; a regression
    of the code is slower in every process, so it stays listed."""
    for attempt in range(1, args.retries + 1):
        flagged = [row for row in ref["rows"] if is_slower(row, cur)]
        if not flagged:
            break
        by_key = {key(r): r for r in cur["rows"]}
        selectors = sorted({by_key[key(r)].get("selector") for r in flagged
                            if by_key[key(r)].get("selector")})
        if not selectors:
            break
        print(f"gate: retry {attempt} of {args.retries}: {len(flagged)} rows slower; "
              f"rerunning {' '.join(selectors)} in a new process", flush=True)
        cur = best_of(cur, run_bench(args.bench, selectors, extra, args.keep_json,
                                     f"retry{attempt}"))
    return cur


def is_slower(row: Dict[str, Any], cur: Dict[str, Any]) -> bool:
    """Whether the reference row's case in cur is slower beyond its noise."""
    now = next((r for r in cur["rows"] if key(r) == key(row)), None)
    return now is not None and any(
        now[m] > row[m] * (1 + max(MIN_NOISE, float(row[m.replace("_ms", "_noise")])))
        for m in MEASURES)


def current_of(paths: List[str]) -> Dict[str, Any]:
    """One run record from parvis-bench or gate JSON files (a run and its
    retries, or the parts of one run): every row of every file, a row in
    several files judged by its best median, as retries are."""
    cur: Optional[Dict[str, Any]] = None
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("schema") != SCHEMA:
            record: Dict[str, Any] = {"device": None, "rows": []}
            merge(record, doc)
            doc = record
        if cur is None:
            cur = doc
            continue
        if doc["device"] != cur["device"]:
            raise GateError(f"{path} was run on '{doc['device']}', the files before it on "
                            f"'{cur['device']}'")
        known = {key(r) for r in cur["rows"]}
        cur = best_of(cur, doc)
        cur["rows"] += [r for r in doc["rows"] if key(r) not in known]
    assert cur is not None
    return cur


def cmd_compare(args: argparse.Namespace) -> int:
    if args.retries < 0:
        raise GateError(f"--retries {args.retries}: at least 0")
    if args.current:
        cur = current_of(args.current)
        path, ref = load_reference(args.reference, cur["device"], args.reference_dir)
    else:
        path, ref = None, None
        if args.reference:
            path, ref = load_reference(args.reference, "")
        elif not glob.glob(os.path.join(args.reference_dir, "*.json")):
            raise GateError(f"no reference for any device in {args.reference_dir}: make one "
                            f"with `bench/gate.py make` on the GPU (docs/benchmarks.md)")
        selectors = args.case or (ref["selectors"] if ref else HEADLINE)
        extra = shlex.split(args.bench_args) if args.bench_args is not None else \
            (ref.get("bench_args", []) if ref else [])
        cur = run_bench(args.bench, selectors, extra, args.keep_json)
        if ref is None:
            path, ref = load_reference(None, cur["device"], args.reference_dir)
        if ref["device"] == cur["device"] or args.force:
            cur = retry_slower(args, ref, cur, extra)
    if ref["device"] != cur["device"] and not args.force:
        raise GateError(f"{path} was measured on '{ref['device']}', this run on "
                        f"'{cur['device']}' (--force to compare anyway)")
    slower, missing = regressions(ref, cur)
    for line in missing:
        print(f"gate: not run: {line}")
    for line in slower:
        print(f"gate: SLOWER {line}")
    print(f"gate: {len(ref['rows'])} reference rows from {path}, {len(slower)} slower "
          f"beyond their noise, {len(missing)} not run")
    return 1 if slower or missing else 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("make", "compare"):
        p = sub.add_parser(name)
        p.add_argument("--bench", default="parvis-bench", help="the parvis-bench to run")
        p.add_argument("--case", action="append", metavar="SELECTOR",
                       help="a parvis-bench --case selector (repeatable; default the "
                            "headline operations, or the reference's)")
        p.add_argument("--bench-args", default=None, metavar="'ARGS'",
                       help="more parvis-bench arguments in one word, split as the shell "
                            "does, e.g. --bench-args='--runs 9' (default the reference's)")
    sub.choices["make"].add_argument("--rounds", type=int, default=2,
                                     help="bench processes per row (default 2): the noise "
                                          "includes the spread between them")
    for name in ("make", "compare"):
        sub.choices[name].add_argument("--keep-json", metavar="DIR",
                                       help="also keep each run's parvis-bench JSON in DIR")
    sub.choices["make"].add_argument("--out", help="the reference to write (default "
                                     "bench/reference/<device>.json)")
    compare = sub.choices["compare"]
    compare.add_argument("--reference", help="the reference (default "
                         "bench/reference/<device>.json)")
    compare.add_argument("--reference-dir", default=REFERENCE_DIR,
                         help="where to look for <device>.json (default bench/reference)")
    compare.add_argument("--current", nargs="+", metavar="JSON",
                         help="compare these parvis-bench or gate JSON files instead of "
                              "running the bench (a row in several: its best median)")
    compare.add_argument("--retries", type=int, default=2, metavar="N",
                         help="rerun the selectors of rows found slower up to N times in "
                              "new processes, judging each row by its best median (default "
                              "2; 0: judge the first run alone)")
    compare.add_argument("--force", action="store_true",
                         help="compare against a reference of another device model")
    join = sub.add_parser("join", help="one reference from parts made of disjoint selectors")
    join.add_argument("parts", nargs="+", help="references written by make")
    join.add_argument("--out", required=True, help="the joined reference to write")
    widen = sub.add_parser("widen", help="raise a reference's noise to the spread of later "
                           "runs of the same tree (parvis-bench JSON, e.g. compare --keep-json)")
    widen.add_argument("reference", help="the reference to widen")
    widen.add_argument("runs", nargs="+", help="parvis-bench JSON files of later runs")
    widen.add_argument("--out", help="where to write (default: the reference itself)")
    args = parser.parse_args(argv)
    commands = {"make": cmd_make, "compare": cmd_compare, "join": cmd_join, "widen": cmd_widen}
    try:
        return commands[args.command](args)
    except (GateError, OSError, KeyError, ValueError) as err:
        print(f"gate: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
