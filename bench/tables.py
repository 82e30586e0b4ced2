#!/usr/bin/env python3
"""Every measured table of README.md and docs/ rendered from committed JSON.

A table lives between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->``;
this script knows how to render each NAME from the JSON under bench/results/
(one directory per device and date, as the GPU machine wrote it), and names
that device and date in each table.  ``--update`` rewrites the blocks,
``--check`` exits 1 when a committed block differs from what the JSON gives
(so a figure typed by hand fails the tests).  The older ``<!-- sgm-table -->``
blocks (bench/sgm_table.py) are rendered and checked the same way.

    python3 bench/tables.py --update README.md docs/headline-results.md
    python3 bench/tables.py --check README.md docs/headline-results.md

Tables:
  sgm       parvis SGM beside libSGM and OpenCV (bench/sgm_table.py's table)
  headline  per operation: parvis CPU, the best CPU peer of the same host,
            parvis on the GPU and the GPU's speedup over both
  dask      Dask with one worker per GPU: throughput and efficiency by GPU count
  gate      the headline sizes from the GPU regression gate's reference
  streams   streams of independent calls: the loop against queued or batched calls
  u16       OCT registration from float and from 16-bit volumes
  sift-chain  two frames to a homography beside CudaSift's chain; the tracking loop
  sift-device SIFT from an image on the device and from host memory, beside CudaSift
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sgm_table  # noqa: E402  (the SGM table's renderer, shared)

ROOT = os.path.dirname(HERE)
SGM_RESULTS = "bench/results/h200-2026-11-28"
HEADLINE_RESULTS = "bench/results/h200-2026-11-29f"
# The README's headline operations, in its order.
HEADLINE_OPS = ["sad", "bp", "sgm", "sift", "pc3d", "octreg", "flow"]
OP_NAMES = {"sad": "SAD stereo", "bp": "BP stereo", "sgm": "SGM stereo", "sift": "SIFT",
            "pc3d": "3D phase correlation", "octreg": "AO-OCT registration",
            "flow": "optical flow"}
# A CPU backend this many times slower than the peer is said so in the table.
SLOW_CPU = 1.5
# The issues' sizes, taken from the gate's runs (gate-*.json) of the same directory.
HEADLINE_BIG_CASES = ("bp-cones-900x750-tuned", "synthetic-1080p", "sgm-1920x1080", "sift-1080p",
                      "512^3 cached vkfft", "oct 512^3", "flow3d-250")


def where(directory: str) -> Tuple[str, str]:
    """(device, date) of a results directory bench/results/<device>-<date>."""
    device = directory.rstrip("/").split("/")[-1]
    date = re.search(r"\d{4}-\d{2}-\d{2}(?=[a-z]?$)", device)
    path = os.path.join(ROOT, directory, "device.txt")
    name = open(path, encoding="utf-8").read().split(",")[0].strip() \
        if os.path.exists(path) else device
    return name, date.group(0) if date else "?"


def cpu_peers(directory: str) -> Dict[str, Tuple[str, float]]:
    """The fastest CPU peer per case of every peers JSON in directory."""
    best: Dict[str, Tuple[str, float]] = {}
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for row in doc.get("peers", []) if isinstance(doc, dict) else []:
            if row.get("path") != "cpu" or not row.get("ms"):
                continue
            if row["case"] not in best or row["ms"] < best[row["case"]][1]:
                best[row["case"]] = (row["peer"], float(row["ms"]))
    return best


def without_engine(case: str) -> str:
    """A case name less the FFT engine parvis-bench appends ('64^3 cached vkfft')."""
    head, _, last = case.rpartition(" ")
    return head if last in ("clfft", "vkfft") else case


def ms(value: float) -> str:
    """A time in three significant figures, whole milliseconds from 1000 up."""
    return f"{value:.0f}" if value >= 1000 else f"{value:.3g}"


def times(value: float, over: float) -> str:
    return f"{value / over:.1f}x" if over > 0 else "-"


def headline_rows(bench: Dict[str, Any], peers: Dict[str, Tuple[str, float]]) -> List[str]:
    """One Markdown row per headline-operation case of a parvis-bench record."""
    lines = []
    for op in HEADLINE_OPS:
        for row in bench["results"]:
            if row["op"] != op or not row.get("opencl"):
                continue
            kern, e2e, cpu = row["opencl_kernel_ms"], row["opencl_total_ms"], row["cpu_ms"]
            peer = peers.get(row["case"]) or peers.get(without_engine(row["case"]))
            peer_text = f"{peer[0]} {ms(peer[1])}" if peer else "none measured"
            if peer and cpu / peer[1] > SLOW_CPU:
                peer_text += f" (parvis CPU {cpu / peer[1]:.1f}x slower)"
            over_peer = times(peer[1], e2e) if peer else "-"
            lines.append(f"| {OP_NAMES[op]} | {row['case']} ({row['params']}) | {ms(cpu)} "
                         f"({row['cpu_threads']} threads) | {peer_text} | {ms(kern)} | "
                         f"{ms(e2e)} | {times(cpu, e2e)} | {over_peer} |")
    return lines


HEADLINE_FILES = ("parvis-quick-h200.json",)


def headline_table() -> str:
    """parvis CPU, the best CPU peer, parvis GPU and the GPU's gains, per case."""
    directory = HEADLINE_RESULTS
    device, date = where(directory)
    peers = cpu_peers(directory)
    rows: List[str] = []
    runs = []
    for name in HEADLINE_FILES:
        with open(os.path.join(ROOT, directory, name), encoding="utf-8") as f:
            bench = json.load(f)
        rows += headline_rows(bench, peers)
        runs.append(f"`{name}`: {bench['selection']}, medians of {bench['runs']} runs after "
                    f"{bench['warmup']} warm-ups, CPU on the host's "
                    f"{bench['host'].get('online_cpus', '?')} cores")
    big: List[str] = []
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "gate-*.json"))):
        with open(path, encoding="utf-8") as f:
            bench = json.load(f)
        bench["results"] = [r for r in bench["results"] if r["case"] in HEADLINE_BIG_CASES]
        big += headline_rows(bench, peers)
    runs.append("`gate-*.json`: the issues' sizes from the regression gate's runs, medians of 9 "
                "runs after 2 warm-ups, the CPU once")
    lines = [f"Measured on one {device} on {date} ({'; '.join(runs)}). The peer is the "
             f"fastest CPU peer of `bench/peers/peers.py` for that case, measured on the same "
             f"host in the same directory. Generated by `bench/tables.py` from `{directory}`; "
             f"a GPU gain is a CPU time over the GPU's end-to-end time.", "",
             "| operation | case | parvis CPU ms | best CPU peer ms | parvis GPU kernels ms "
             "| parvis GPU end to end ms | GPU gain over parvis CPU | GPU gain over the peer |",
             "|---|---|---|---|---|---|---|---|"]
    lines += rows + big
    return "\n".join(lines) + "\n"


DASK_RESULTS = "bench/results/h200x2-2026-11-28"


def dask_batch_name(args: Dict[str, Any]) -> str:
    """A Dask scaling run's batch, as the table names it."""
    if "oct" in args["workloads"]:
        n = args["oct_size"]
        return f"OCT registration, {args['oct_targets']} targets of {n[0]}x{n[1]}x{n[2]}"
    w, h = args["stereo_size"]
    return (f"{args.get('stereo_method', 'sad').upper()} stereo, {args['stereo_pairs']} pairs "
            f"of {w}x{h}, {args['stereo_ndisp']} disparities")


def dask_table() -> str:
    """Dask, one worker process per GPU: throughput and efficiency by GPU count."""
    directory = DASK_RESULTS
    device, date = where(directory)
    rates: Dict[str, Dict[int, Tuple[float, str, str]]] = {}
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "dask-*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        name = dask_batch_name(doc["args"])
        for row in doc["rows"]:
            if row["path"] == "dask":
                rates.setdefault(name, {})[row["workers"]] = (
                    row["rate"], row["unit"], doc["args"].get("workdir") or "a temporary directory")
    counts = sorted({k for by in rates.values() for k in by})
    lines = [f"Measured on the {device} machine with {max(counts)} GPUs on {date}: "
             f"`python/bench/dask_scaling.py --mode multi-gpu --gpus ...`, one `dask worker` "
             f"process per GPU (`PARVIS_DEVICE`), inputs read from files and results written "
             f"back (fsync included) in the work directory named. Efficiency: the rate over "
             f"the GPU count times the one-GPU rate. Generated by `bench/tables.py` from "
             f"`{directory}`.", "",
             "| batch | work directory | " + " | ".join(f"{k} GPU{'s' if k > 1 else ''}"
                                                       for k in counts) + " | efficiency |",
             "|---|---|" + "---|" * len(counts) + "---|"]
    for name, by in rates.items():
        one = by.get(1)
        cells = [f"{by[k][0]:.1f} {by[k][1]}" if k in by else "-" for k in counts]
        eff = ", ".join(f"{by[k][0] / (k * one[0]):.2f} at {k}" for k in counts
                        if one and k in by and k > 1)
        lines.append(f"| {name} | {next(iter(by.values()))[2]} | " + " | ".join(cells) +
                     f" | {eff or '-'} |")
    return "\n".join(lines) + "\n"


GATE_REFERENCE = "bench/reference/nvidia-h200.json"
# The papers' and the issues' sizes, one row each, from the gate's reference.
GATE_ROWS = [("bp", "bp-cones-900x750-tuned", "BP stereo"),
             ("sad", "synthetic-1080p", "SAD stereo"),
             ("sgm", "sgm-1920x1080", "SGM stereo"),
             ("sgm", "sgm-stream-1080p-loop", "SGM stereo, 32 pairs one call each"),
             ("sgm", "sgm-stream-1080p", "SGM stereo, 32 pairs as one batch (a stream)"),
             ("sift", "sift-1080p", "SIFT"),
             ("pc3d", "512^3 cached vkfft", "3D phase correlation"),
             ("octreg", "oct 512^3", "AO-OCT registration"),
             ("flow", "flow3d-250", "3D optical flow")]


def gate_table() -> str:
    """The headline sizes from the GPU's regression-gate reference."""
    with open(os.path.join(ROOT, GATE_REFERENCE), encoding="utf-8") as f:
        ref = json.load(f)
    rows = {(r["op"], r["case"]): r for r in ref["rows"]}
    args = " ".join(ref.get("bench_args", []))
    lines = [f"Measured on one {ref['device']} (the regression gate's reference, "
             f"`bench/gate.py make`, parvis-bench `{args}`: OpenCL medians; noise: the spread "
             f"of the runs, at least 10 %). Generated by `bench/tables.py` from "
             f"`{GATE_REFERENCE}`.", "",
             "| operation | case | kernels ms | end to end ms | noise (kernels / end to end) |",
             "|---|---|---|---|---|"]
    for op, case, name in GATE_ROWS:
        r = rows.get((op, case))
        if r is None:
            continue
        lines.append(f"| {name} | {case} ({r.get('params', '')}) | {ms(r['kernel_ms'])} | "
                     f"{ms(r['total_ms'])} | {100 * r['kernel_noise']:.0f} % / "
                     f"{100 * r['total_noise']:.0f} % |")
    return "\n".join(lines) + "\n"


PIPELINE_RESULTS = "bench/results/h200-2026-11-29e"


def pipeline_rows(directory: str) -> List[Dict[str, Any]]:
    """Every parvis-bench row of the JSON files in directory."""
    rows: List[Dict[str, Any]] = []
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if isinstance(doc, dict) and doc.get("schema", "").startswith("parvis-bench"):
            rows += [r for r in doc["results"] if r.get("opencl")]
    return rows


def streams_table() -> str:
    """Streams of independent calls: the loop of single calls against the
    same calls queued on two contexts (or one batch call)."""
    directory = PIPELINE_RESULTS
    device, date = where(directory)
    lines = [f"Measured on one {device} on {date} (`parvis-bench --case =NAME --runs 9 "
             f"--warmup 2`, the loop and the stream in the same process; items per second of "
             f"the whole stream, host memory to host memory). Generated by `bench/tables.py` "
             f"from `{directory}`.", "",
             "| stream | items | loop of single calls | queued / batched | rate over the loop |",
             "|---|---|---|---|---|"]
    for r in pipeline_rows(directory):
        stream = r.get("stream") or {}
        loop = stream.get("opencl_loop_pairs_per_s")
        if not loop or r["variant"] == "stream":
            continue  # the SGM batch rows have a table of their own (sgm.md)
        rate = stream["opencl_pairs_per_s"]
        lines.append(f"| {r['case']} ({r['variant']}) | {stream['pairs']} | {loop:.1f}/s | "
                     f"{rate:.1f}/s | {rate / loop:.2f}x |")
    return "\n".join(lines) + "\n"


def u16_table() -> str:
    """OCT registration from float and from 16-bit volumes, one process."""
    directory = PIPELINE_RESULTS
    device, date = where(directory)
    rows = {r["case"]: r for r in pipeline_rows(directory) if r["op"] == "octreg"}
    lines = [f"Measured on one {device} on {date} (`parvis-bench --case '=oct 512^3'` and "
             f"`'=oct 512^3 u16'`, medians of 7 runs after 2 warm-ups). Generated by "
             f"`bench/tables.py` from `{directory}`.", "",
             "| case | upload ms | kernels ms | end to end ms | B-scans within the CPU's tolerance |",
             "|---|---|---|---|---|"]
    for case in sorted(rows):
        r = rows[case]
        quality = (r.get("quality") or {}).get("opencl")
        share = f"{100 * quality:.2f} %" if quality is not None else "-"
        lines.append(f"| {case} | {ms(r['opencl_upload_ms'])} | {ms(r['opencl_kernel_ms'])} | "
                     f"{ms(r['opencl_total_ms'])} | {share} |")
    return "\n".join(lines) + "\n"


def sift_chain_table() -> str:
    """Two frames to a homography: parvis's chain beside CudaSift's, and
    the tracking loop."""
    directory = PIPELINE_RESULTS
    device, date = where(directory)
    peers: Dict[str, Dict[str, Any]] = {}
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "peers-*.json"))):
        with open(path, encoding="utf-8") as f:
            for row in json.load(f).get("peers", []):
                if row.get("peer") == "cudasift":
                    peers[row["case"]] = row
    rows = {r["case"]: r for r in pipeline_rows(directory) if r["op"] == "sift"}
    lines = [f"Measured on one {device} on {date} (`parvis-bench --case =NAME --runs 30 "
             f"--warmup 5`; CudaSift's demo chain, upload + ExtractSift x2 + MatchSiftData + "
             f"FindHomography with 10000 loops, by `bench/peers/peers.py` on the same frames "
             f"and GPU). Generated by `bench/tables.py` from `{directory}`.", "",
             "| case | parvis kernels ms | parvis end to end ms | CudaSift chain ms | "
             "parvis faster by | corner error parvis / CudaSift px |",
             "|---|---|---|---|---|---|"]
    for case in sorted(c for c in rows if c.startswith("sift-chain")):
        r, peer = rows[case], peers.get(case)
        error = (r.get("quality") or {}).get("opencl")
        peer_ms = f"{peer['ms']:.3f}" if peer else "-"
        ratio = f"{peer['ms'] / r['opencl_total_ms']:.2f}x" if peer else "-"
        peer_error = f"{peer['corner_error_px']:.2f}" if peer and "corner_error_px" in peer else "-"
        lines.append(f"| {case} | {r['opencl_kernel_ms']:.3f} | {r['opencl_total_ms']:.3f} | "
                     f"{peer_ms} | {ratio} | {error:.3f} / {peer_error} |")
    rates = {}
    for case, r in rows.items():
        found = re.search(r"frames/s cpu [0-9.]+ cl ([0-9.]+)", r.get("params", ""))
        if case.startswith("sift-track") and found:
            rates[case] = float(found.group(1))
    loop = next((v for k, v in rates.items() if k.endswith("-loop")), None)
    chain = next((v for k, v in rates.items() if not k.endswith("-loop")), None)
    if loop and chain:
        lines += ["", f"A 720p video matched frame to frame (`sift-track-720p`, 8 frames): "
                      f"{chain:.1f} frames/s through `pv_sift_track_next` against {loop:.1f} "
                      f"frames/s for the loop of detect, match and homography calls "
                      f"({chain / loop:.2f}x)."]
    return "\n".join(lines) + "\n"


DEVICE_RESULTS = "bench/results/h200-2026-11-29g"


def sift_device_table() -> str:
    """SIFT detection from an image already in a device buffer
    (pv_sift_detect_cl) and from host memory, beside CudaSift's ExtractSift
    on an image already on the device; keypoints back in host memory."""
    directory = DEVICE_RESULTS
    device, date = where(directory)
    peers: Dict[str, float] = {}
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "peers-*.json"))):
        with open(path, encoding="utf-8") as f:
            for row in json.load(f).get("peers", []):
                if row.get("peer") == "cudasift":
                    peers[row["case"]] = float(row["ms"])
    rows = {r["case"]: r for r in pipeline_rows(directory) if r["op"] == "sift"}
    lines = [f"Measured on one {device} on {date} (`parvis-bench --case =NAME --runs 30 "
             f"--warmup 5`; CudaSift's ExtractSift on the image already on the device, its "
             f"points copied to the host, by `bench/peers/peers.py` on the same images and GPU). "
             f"Generated by `bench/tables.py` from `{directory}`.", "",
             "| size | parvis kernels ms | parvis from a device buffer ms | parvis from host "
             "memory ms | CudaSift, image on the device ms | parvis (device buffer) / CudaSift |",
             "|---|---|---|---|---|---|"]
    for case in sorted((c for c in rows if c.endswith("-d2d")),
                       key=lambda c: rows[c]["size"]):
        d2d, host = rows[case], rows.get(case[:-len("-d2d")])
        peer = peers.get(case[:-len("-d2d")])
        host_ms = ms(host["opencl_total_ms"]) if host else "-"
        peer_ms = ms(peer) if peer else "-"
        ratio = f"{d2d['opencl_total_ms'] / peer:.2f}x the time" if peer else "-"
        lines.append(f"| {case[len('sift-'):-len('-d2d')]} | {ms(d2d['opencl_kernel_ms'])} | "
                     f"{ms(d2d['opencl_total_ms'])} | {host_ms} | {peer_ms} | {ratio} |")
    return "\n".join(lines) + "\n"


def sgm() -> str:
    return sgm_table.table(sgm_table.load(os.path.join(ROOT, SGM_RESULTS)), SGM_RESULTS)


TABLES: Dict[str, Callable[[], str]] = {"sgm": sgm, "headline": headline_table,
                                        "dask": dask_table, "gate": gate_table,
                                        "streams": streams_table, "u16": u16_table,
                                        "sift-chain": sift_chain_table,
                                        "sift-device": sift_device_table}


def blocks(content: str) -> List[Tuple[str, str, str]]:
    """(begin marker, end marker, table name) of every block in content."""
    found = [(m.group(0), f"<!-- /table:{m.group(1)} -->", m.group(1))
             for m in re.finditer(r"^<!-- table:([a-z0-9-]+) -->$", content, re.M)]
    # A marker counts only alone on its line: prose may name one in backticks.
    if re.search("^" + re.escape(sgm_table.BEGIN) + "$", content, re.M):
        found.append((sgm_table.BEGIN, sgm_table.END, "sgm"))
    return found


def render(content: str, path: str) -> str:
    """content with every known block rendered afresh."""
    for begin, end, name in blocks(content):
        if name not in TABLES:
            raise SystemExit(f"tables: {path}: no table named {name!r}")
        pattern = re.compile("^" + re.escape(begin) + r"$.*?^" + re.escape(end) + "$",
                             re.S | re.M)
        if not pattern.search(content):
            raise SystemExit(f"tables: {path}: {begin} has no {end}")
        text = TABLES[name]()
        content = pattern.sub(lambda _: f"{begin}\n{text}{end}", content)
    return content


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--update", action="store_true", help="rewrite the files' blocks")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when a file's block differs from the JSON's table")
    parser.add_argument("--table", choices=sorted(TABLES), help="print one table")
    parser.add_argument("files", nargs="*", help="Markdown files holding blocks")
    args = parser.parse_args(argv)
    if args.table:
        sys.stdout.write(TABLES[args.table]())
    stale = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            content = f.read()
        fresh = render(content, path)
        if args.update and fresh != content:
            with open(path, "w", encoding="utf-8") as f:
                f.write(fresh)
        elif args.check and fresh != content:
            stale.append(path)
    for path in stale:
        print(f"tables: {path} differs from `bench/tables.py --update {path}` "
              f"(a table edited by hand, or JSON changed without regenerating)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
