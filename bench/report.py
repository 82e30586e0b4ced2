#!/usr/bin/env python3
"""Join parvis-bench's JSON with the peers' JSON (bench/peers/peers.py) per
operation and case, as Markdown tables of times and ratios.

    bench/report.py PARVIS.json [PEERS.json ...] [--markdown OUT] [--json OUT]
                    [--op OP ...] [--all]

Ratios are parvis / peer (below 1: parvis is faster), because absolute
times on shared machines drift while ratios measured on one machine in one
session hold better:
  - against a CPU peer: parvis CPU / peer and parvis OpenCL end to end / peer;
  - against a GPU peer (OpenCV's T-API, path "opencl"; CudaSift, path "cuda"):
    parvis OpenCL end to end / peer.
A first table, the CPU baseline, puts per case parvis's CPU backend beside
the fastest CPU peer of the same host and the GPU's gain over both.
Rows are joined on the operation and the case name; parvis's FFT-engine
suffix (" clfft", " vkfft") is ignored for the join, so each engine's row
meets the same peers.  Fields are read defensively: rows or fields missing
from either file show as "-".  Standard library only.
"""

import argparse
import json
import sys

OP_TITLES = {
    "sad": "SAD stereo",
    "bp": "Belief-propagation stereo",
    "sift": "SIFT detection + description",
    "match": "SIFT matching",
    "pc2d": "2D phase correlation",
    "pc3d": "3D phase correlation",
    "pcm": "Masked phase correlation (Padfield)",
    "fft": "FFT pair (R2C + C2R)",
    "ncc": "Normalized cross-correlation (normxcorr2)",
    "ncc-masked": "Masked normalized cross-correlation",
    "ncc-batch": "Normalized cross-correlation, batches against one template",
    "oct": "AO-OCT volume registration",
    "flow": "3D optical flow",
}
OP_ORDER = ["sad", "bp", "sift", "match", "pc2d", "pc3d", "pcm", "fft", "ncc", "ncc-masked",
            "ncc-batch", "oct", "flow"]
ENGINE_SUFFIXES = (" clfft", " vkfft", " fftw")
# Where parvis's CPU backend is this many times slower than the best CPU peer,
# the baseline table marks it (the threshold).
SLOW_CPU = 1.5


def number(value):
    """A finite float from value, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(value, str):
        try:
            return number(float(value))
        except ValueError:
            return None
    return None


def first_number(row, keys):
    for key in keys:
        v = number(row.get(key))
        if v is not None:
            return v
    return None


def roofline_fraction(row):
    """The OpenCL row's roofline fraction under any of the names it may
    carry: a flat key, or a "roofline" object with a fraction."""
    v = first_number(row, ("roofline_fraction", "opencl_roofline_fraction", "roofline_frac",
                           "bandwidth_fraction"))
    if v is not None:
        return v
    nested = row.get("roofline")
    if isinstance(nested, dict):
        v = first_number(nested, ("fraction", "opencl_fraction", "opencl", "frac"))
        if v is not None:
            return v
    elif number(nested) is not None:
        return number(nested)
    for key, value in row.items():
        if ("roofline" in key and "fraction" in key and not key.startswith("cpu")
                and number(value) is not None):
            return number(value)
    return None


def nested_number(row, *keys):
    value = row
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return number(value)


def fmt_fraction(v):
    if v is None:
        return None
    return "%.2g%%" % (100 * v) if v < 0.01 else "%.0f%%" % (100 * v)


def join_key(op, case):
    case = (case or "").strip()
    for suffix in ENGINE_SUFFIXES:
        if case.endswith(suffix):
            case = case[: -len(suffix)]
            break
    return (op or "", case)


def fmt_scaled(v, smallest, suffix=""):
    """v with fewer decimals the larger it is (none from 100 up, three
    below `smallest`); "-" for None."""
    if v is None:
        return "-"
    for limit, digits in ((100, 0), (10, 1), (smallest, 2)):
        if v >= limit:
            return "%.*f%s" % (digits, v, suffix)
    return "%.3f%s" % (v, suffix)


def fmt_ms(v):
    return fmt_scaled(v, 1)


def fmt_ratio(v):
    return fmt_scaled(v, 0.1, "x")


def ratio(parvis_ms, peer_ms):
    if parvis_ms is None or peer_ms is None or peer_ms <= 0:
        return None
    return parvis_ms / peer_ms


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        sys.exit("report.py: cannot read %s: %s" % (path, error))


def parvis_rows(doc):
    rows = []
    for r in doc.get("results", []) if isinstance(doc, dict) else []:
        if not isinstance(r, dict) or "op" not in r or "case" not in r:
            continue
        cpu_ms = first_number(r, ("cpu_ms", "cpu_total_ms"))
        if cpu_ms is None:
            cpu_ms = nested_number(r, "cpu", "median", "total_ms")
        cl_ms = first_number(r, ("opencl_total_ms", "opencl_e2e_ms"))
        if cl_ms is None:
            cl_ms = nested_number(r, "opencl", "median", "total_ms")
        # roofline_fraction is the OpenCL side's when the row has one, else
        # the CPU's; cpu_roofline_fraction is always the CPU's.
        fraction = roofline_fraction(r)
        cpu_fraction = number(r.get("cpu_roofline_fraction"))
        if cl_ms is None and cpu_fraction is None:
            cpu_fraction, fraction = fraction, None
        elif cl_ms is None:
            fraction = None
        rows.append({
            "op": str(r["op"]), "case": str(r["case"]), "params": r.get("params", ""),
            "cpu_ms": cpu_ms,
            "cl_ms": cl_ms,
            "cl_kernel_ms": first_number(r, ("opencl_kernel_ms",)),
            "roofline": fraction,
            "cpu_roofline": cpu_fraction,
            "engine": r.get("fft_engine") or r.get("engine"),
            "quality_metric": r.get("quality_metric") or (
                r["quality"].get("metric") if isinstance(r.get("quality"), dict) else None),
            "cpu_quality": first_number(r, ("cpu_quality",)) if "cpu_quality" in r
            else nested_number(r, "quality", "cpu"),
            "cl_quality": first_number(r, ("opencl_quality",)) if "opencl_quality" in r
            else nested_number(r, "quality", "opencl"),
        })
    return rows


def peer_rows(docs):
    rows = []
    for doc in docs:
        entries = doc.get("peers", []) if isinstance(doc, dict) else doc
        for r in entries if isinstance(entries, list) else []:
            if not isinstance(r, dict) or number(r.get("ms")) is None:
                continue
            rows.append({
                "op": str(r.get("op", "")), "case": str(r.get("case", "")),
                "peer": str(r.get("peer", "?")), "path": str(r.get("path", "cpu")),
                "ms": number(r["ms"]), "runs": r.get("runs"), "note": r.get("note", ""),
                "quality_metric": r.get("quality_metric"), "quality": number(r.get("quality")),
            })
    return rows


# Peers that run on a GPU: parvis's OpenCL end to end is set against them.
GPU_PATHS = {"opencl": "OpenCL", "cuda": "CUDA"}


def peer_label(peer, path):
    return "%s %s" % (peer, GPU_PATHS.get(path, "CPU"))


def op_table(op, prows, peers, lines, joined):
    """One operation's table: parvis rows (and peer-only cases) by case."""
    columns = []  # (peer, path) in first-seen order
    for p in peers:
        if (p["peer"], p["path"]) not in columns:
            columns.append((p["peer"], p["path"]))
    by_key = {}
    for p in peers:
        by_key.setdefault(join_key(p["op"], p["case"]), {})[(p["peer"], p["path"])] = p
    have_roofline = any(r["roofline"] is not None or r["cpu_roofline"] is not None for r in prows)

    head = ["case", "parvis CPU ms", "parvis OpenCL e2e ms"]
    if have_roofline:
        head.append("roofline")
    for peer, path in columns:
        label = peer_label(peer, path)
        head += ["%s ms" % label, "parvis / %s" % label]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))

    cases = [(r["case"], r) for r in prows]
    seen = {join_key(op, r["case"]) for r in prows}
    for p in peers:  # cases only the peers ran
        key = join_key(p["op"], p["case"])
        if key not in seen:
            seen.add(key)
            cases.append((p["case"], None))

    for case, r in cases:
        cpu_ms = r["cpu_ms"] if r else None
        cl_ms = r["cl_ms"] if r else None
        cells = [case, fmt_ms(cpu_ms), fmt_ms(cl_ms)]
        if have_roofline:
            parts = []
            if r and r["roofline"] is not None:
                parts.append("OpenCL %s" % fmt_fraction(r["roofline"]))
            if r and r["cpu_roofline"] is not None:
                parts.append("CPU %s" % fmt_fraction(r["cpu_roofline"]))
            cells.append(", ".join(parts) if parts else "-")
        matched = by_key.get(join_key(op, case), {})
        for column in columns:
            p = matched.get(column)
            if not p:
                cells += ["-", "-"]
                continue
            cells.append(fmt_ms(p["ms"]))
            if column[1] in GPU_PATHS:
                cl_ratio = ratio(cl_ms, p["ms"])
                cells.append("e2e %s" % fmt_ratio(cl_ratio) if cl_ratio is not None else "-")
                joined.append({"op": op, "case": case, "peer": p["peer"], "path": p["path"],
                               "peer_ms": p["ms"], "parvis_opencl_ms": cl_ms,
                               "ratio_opencl": cl_ratio})
            else:
                cpu_ratio, cl_ratio = ratio(cpu_ms, p["ms"]), ratio(cl_ms, p["ms"])
                parts = []
                if cpu_ratio is not None:
                    parts.append("CPU %s" % fmt_ratio(cpu_ratio))
                if cl_ratio is not None:
                    parts.append("e2e %s" % fmt_ratio(cl_ratio))
                cells.append(", ".join(parts) if parts else "-")
                joined.append({"op": op, "case": case, "peer": p["peer"], "path": p["path"],
                               "peer_ms": p["ms"], "parvis_cpu_ms": cpu_ms,
                               "parvis_opencl_ms": cl_ms, "ratio_cpu": cpu_ratio,
                               "ratio_opencl": cl_ratio})
        lines.append("| " + " | ".join(cells) + " |")
    return columns


def quality_table(op, prows, peers, columns, lines):
    """Accuracy beside the times, where either side measured one."""
    if not any(r["cpu_quality"] is not None for r in prows) and \
            not any(p["quality"] is not None for p in peers):
        return
    by_key = {}
    for p in peers:
        by_key.setdefault(join_key(p["op"], p["case"]), {})[(p["peer"], p["path"])] = p
    head = ["case", "metric", "parvis CPU", "parvis OpenCL"] + \
        [peer_label(peer, path) for peer, path in columns]
    out = []
    seen = set()
    rows = [(r["case"], r) for r in prows]
    for p in peers:
        key = join_key(p["op"], p["case"])
        if key not in {join_key(op, c) for c, _ in rows}:
            rows.append((p["case"], None))
    for case, r in rows:
        key = join_key(op, case)
        if r is None and key in seen:
            continue
        seen.add(key)
        matched = by_key.get(key, {})
        metric = (r and r["quality_metric"]) or next(
            (p["quality_metric"] for p in matched.values() if p["quality_metric"]), "")
        cells = [case, metric or "-",
                 "-" if not r or r["cpu_quality"] is None else "%.4g" % r["cpu_quality"],
                 "-" if not r or r["cl_quality"] is None else "%.4g" % r["cl_quality"]]
        for column in columns:
            p = matched.get(column)
            cells.append("-" if not p or p["quality"] is None else "%.4g" % p["quality"])
        if any(c != "-" for c in cells[2:]):
            out.append("| " + " | ".join(cells) + " |")
    if out:
        lines.append("")
        lines.append("Accuracy:")
        lines.append("")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        lines.extend(out)


def notes_list(peers, lines):
    """Each peer's configuration once (per case where the cases differ),
    without the per-case results (shifts, peaks, counts, errors)."""
    by_label = {}
    for p in peers:
        parts = (p["note"] or "").split("; ")
        text = "; ".join(part for part in parts
                         if part and not part.startswith(("shift", "peak at", "bad>1px"))
                         and not part.endswith(("keypoints", "descriptors")))
        if text:
            by_label.setdefault(peer_label(p["peer"], p["path"]), []).append((p["case"], text))
    if not by_label:
        return
    lines.append("")
    for label, items in by_label.items():
        texts = []
        for _case, text in items:
            if text not in texts:
                texts.append(text)
        if len(texts) == 1:
            lines.append("- %s: %s" % (label, texts[0]))
        else:
            for case, text in items:
                lines.append("- %s, %s: %s" % (label, case, text))


def baseline_table(prows, peers, lines):
    """Per parvis row with a CPU peer: parvis CPU, the fastest CPU peer of the
    same case (same host), parvis OpenCL end to end and the GPU's gain over
    both; rows where parvis's CPU backend is more than SLOW_CPU times slower
    than that peer are marked, so the GPU's gain over the best CPU code is the
    one a reader sees."""
    best = {}
    for p in peers:
        key = join_key(p["op"], p["case"])
        if p["path"] == "cpu" and (key not in best or p["ms"] < best[key]["ms"]):
            best[key] = p
    rows = [(r, best[join_key(r["op"], r["case"])]) for r in prows
            if join_key(r["op"], r["case"]) in best]
    if not rows:
        return
    lines += ["", "## CPU baseline: parvis beside the fastest CPU peer", "",
              "GPU gains are CPU times over parvis's OpenCL end-to-end time; \"slow\" marks a "
              "CPU backend more than %.1fx slower than the peer." % SLOW_CPU, "",
              "| op | case | parvis CPU ms | fastest CPU peer | peer ms | parvis CPU / peer "
              "| parvis GPU e2e ms | GPU gain over parvis CPU | GPU gain over the peer |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r, p in rows:
        cpu_over_peer = ratio(r["cpu_ms"], p["ms"])
        mark = " slow" if cpu_over_peer is not None and cpu_over_peer > SLOW_CPU else ""
        gain_cpu = ratio(r["cpu_ms"], r["cl_ms"])
        gain_peer = ratio(p["ms"], r["cl_ms"])
        lines.append("| %s | %s | %s | %s | %s | %s%s | %s | %s | %s |" % (
            r["op"], r["case"], fmt_ms(r["cpu_ms"]), p["peer"], fmt_ms(p["ms"]),
            fmt_ratio(cpu_over_peer), mark, fmt_ms(r["cl_ms"]), fmt_ratio(gain_cpu),
            fmt_ratio(gain_peer)))


def report(parvis_doc, peer_docs, include_all=False, only_ops=None):
    prows = parvis_rows(parvis_doc)
    peers = peer_rows(peer_docs)
    lines = ["# parvis and its peers", ""]
    if isinstance(parvis_doc, dict):
        device = parvis_doc.get("opencl_device") or "none"
        cl = parvis_doc.get("opencl")
        if isinstance(cl, dict) and cl.get("driver_version"):
            device = "%s (%s, driver %s)" % (cl.get("device") or device, cl.get("platform") or "?",
                                             cl["driver_version"])
        host = parvis_doc.get("host")
        cpu = parvis_doc.get("cpu", "?")
        if isinstance(host, dict) and host.get("cpu_model"):
            cpu = "%s on %s" % (cpu, host["cpu_model"])
        lines.append("parvis %s; CPU backend: %s; OpenCL device: %s; %s runs after %s warm-up "
                     "(medians)." % (parvis_doc.get("parvis_version", "?"), cpu, device,
                                     parvis_doc.get("runs", "?"), parvis_doc.get("warmup", "?")))
    for doc in peer_docs:
        m = doc.get("machine", {}) if isinstance(doc, dict) else {}
        if m:
            parts = ["CPU %s (%s logical)" % (m.get("cpu_model", "?"), m.get("cpu_count", "?")),
                     "Python %s" % m.get("python", "?")]
            if m.get("cv2"):
                device = m.get("cv2_opencl_device") if m.get("cv2_use_opencl") else None
                parts.append("OpenCV %s (%s threads; OpenCL %s)" % (
                    m["cv2"], m.get("cv2_threads", "?"), device or "not used"))
            if m.get("skimage"):
                parts.append("scikit-image %s" % m["skimage"])
            if m.get("vlfeat_peer"):
                parts.append("VLFeat (C, one thread)")
            lines.append("Peers: " + "; ".join(parts) + ".")
    lines.append("")
    lines.append("Ratios are parvis / peer: below 1x parvis is faster.  \"CPU\" is parvis's CPU "
                 "backend, \"e2e\" its OpenCL end-to-end time (uploads and downloads included); "
                 "OpenCL peers are timed end to end too.  Accuracy: bad>1px is the Middlebury "
                 "error share, exact the share of exact answers (shift or template offset); "
                 "parvis's sift quality is the share of VLFeat's keypoints it reproduces.")
    baseline_table(prows, peers, lines)
    ops = []
    for op in OP_ORDER + sorted({r["op"] for r in prows} | {p["op"] for p in peers}):
        if op not in ops:
            ops.append(op)
    joined = []
    for op in ops:
        op_prows = [r for r in prows if r["op"] == op]
        op_peers = [p for p in peers if p["op"] == op]
        if not op_peers and not (include_all and op_prows):
            continue
        if only_ops and op not in only_ops:
            continue
        lines.append("")
        lines.append("## %s (`%s`)" % (OP_TITLES.get(op, op), op))
        lines.append("")
        columns = op_table(op, op_prows, op_peers, lines, joined)
        quality_table(op, op_prows, op_peers, columns, lines)
        notes_list(op_peers, lines)
    return "\n".join(lines) + "\n", joined


def main(argv):
    p = argparse.ArgumentParser(description="Join parvis-bench and peers JSON as Markdown tables.")
    p.add_argument("parvis", help="parvis-bench --json output")
    p.add_argument("peers", nargs="*", help="bench/peers/peers.py --json output(s)")
    p.add_argument("--markdown", metavar="OUT", help="write the Markdown here (else stdout only)")
    p.add_argument("--json", metavar="OUT", help="write the joined rows with their ratios here")
    p.add_argument("--all", action="store_true",
                   help="also list parvis operations that no peer ran")
    p.add_argument("--op", action="append",
                   help="only this operation's table (sad, sift, pc2d, pc3d, ncc, ...); repeatable")
    args = p.parse_args(argv)
    text, joined = report(load(args.parvis), [load(path) for path in args.peers], args.all,
                          args.op)
    sys.stdout.write(text)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"joined": joined}, out, indent=1)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
