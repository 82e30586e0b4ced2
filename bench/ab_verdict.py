#!/usr/bin/env python3
"""Per row of a parvis-bench A/B run (--ab-param, --ab-rounds): is side A
within 5 % of side B, slower, or can the rounds not tell?

    bench/ab_verdict.py AB.json [--target 0.05] [--confidence 0.95]

bench/tune_db_check.sh runs it with side A the tuning database's entry and
side B a fresh local tune, so "A/B" there reads "database over local tune".

Why a verdict and not only a ratio: on the GPU machine a whole pass (one
side's fresh context over the selection) runs fast or slow as a whole, so
two sides with identical launch parameters differ by up to a quarter in
one round, and a median over a few rounds still by up to a fifth.  The
ratio of two medians then says "slower" where nothing differs.  This
script pairs the two sides round by round (each round runs both, the
order alternating), takes the per-round ratios A/B, and puts a
distribution-free confidence interval on their median (order statistics
of the rounds; no assumption on the shape of the noise).  Then, per row:

  within      the interval's top is at most 1 + target: A is within the
              target of B at that confidence;
  slower      the interval's bottom is above 1 + target: A is slower;
  unresolved  the interval straddles 1 + target: more rounds are needed
              to tell (the line says about how many);
  too few     fewer rounds than any interval at that confidence needs
              (6 at 95 %).

The same is done for the kernel times.  Rows whose family has the same
values on both sides are marked "same": their A and B run one
configuration, so every difference there is noise, and their spread is
the noise floor that the summary reports.  Standard library only; exit
status 0 whatever the verdicts (a report, not a gate), 2 on a file it
cannot read.
"""

import argparse
import json
import math
import statistics
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

Interval = Optional[Tuple[float, float]]
# Beyond this the estimate says only that the median sits on the limit.
MAX_ROUNDS_SHOWN = 1000


def binomial_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n


def median_interval(values: Sequence[float], confidence: float) -> Interval:
    """The order-statistic interval [x_(k), x_(n+1-k)] around the median
    with the largest k whose coverage, 1 - 2 P(Bin(n, 1/2) <= k - 1), is
    at least `confidence`; None when even k = 1 falls short."""
    ordered = sorted(values)
    n = len(ordered)
    best = 0
    for k in range(1, n // 2 + 1):
        if 1.0 - 2.0 * binomial_tail(n, k - 1) >= confidence:
            best = k
    if best == 0:
        return None
    return ordered[best - 1], ordered[n - best]


def verdict(interval: Interval, target: float) -> str:
    """within / slower / unresolved / too few (module docstring)."""
    if interval is None:
        return "too few"
    low, high = interval
    if high <= 1.0 + target:
        return "within"
    if low > 1.0 + target:
        return "slower"
    return "unresolved"


def rounds_needed(ratios: Sequence[float], target: float) -> Optional[int]:
    """About how many rounds would shrink the interval's half-width to the
    distance between the median and 1 + target (the width falls as
    1/sqrt(rounds)); None when the median sits on the limit."""
    if len(ratios) < 2:
        return None
    centre = statistics.median(ratios)
    margin = abs(1.0 + target - centre)
    spread = statistics.stdev(ratios) * 1.96 * 1.25  # the median's ~95 % half-width x sqrt(n)
    if margin <= 0 or spread <= 0:
        return None
    return math.ceil((spread / margin) ** 2)


def paired_ratios(row: Dict[str, Any], key: str) -> List[float]:
    """A/B per round for `key` ("total" or "kernel"), over the rounds in
    which both sides were timed."""
    found = []
    for entry in row["ab"].get("rounds", []):
        a, b = entry.get(f"a_{key}_ms"), entry.get(f"b_{key}_ms")
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0:
            found.append(float(a) / float(b))
    return found


def params_word(same: Any) -> str:
    """The JSON's same_params as the table shows it."""
    return "n/a" if same is None else "same" if same else "differ"


def describe(ratios: List[float], confidence: float, target: float) -> Dict[str, Any]:
    """Median, interval and verdict of one row's per-round ratios."""
    interval = median_interval(ratios, confidence)
    return {
        "median": statistics.median(ratios) if ratios else float("nan"),
        "interval": interval,
        "verdict": verdict(interval, target),
        "needed": rounds_needed(ratios, target),
        "rounds": len(ratios),
    }


def cell(summary: Dict[str, Any]) -> str:
    """'1.012 [0.95, 1.08] within' for the table."""
    interval = summary["interval"]
    span = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "[-]"
    word, needed = summary["verdict"], summary["needed"]
    if word == "unresolved" and needed:
        if needed <= summary["rounds"]:
            word += " (a few more rounds)"  # the order statistics are coarser than the estimate
        elif needed <= MAX_ROUNDS_SHOWN:
            word += f" (~{needed} rounds)"
        else:
            word += f" (>{MAX_ROUNDS_SHOWN} rounds)"
    return f"{summary['median']:.3f} {span:<16} {word}"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ab_json", help="parvis-bench --ab-param ... --json FILE")
    parser.add_argument("--target", type=float, default=0.05, help="A may be this much slower")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="coverage of the median's interval")
    args = parser.parse_args(argv)
    if not 0 < args.confidence < 1 or args.target < 0:
        parser.error("--confidence must lie in (0, 1) and --target be >= 0")
    try:
        with open(args.ab_json, encoding="utf-8") as handle:
            document: Dict[str, Any] = json.load(handle)
        top = document["ab"]
        rows = document["results"]
    except (OSError, ValueError, KeyError) as error:
        print(f"ab_verdict: {args.ab_json}: {error}", file=sys.stderr)
        return 2

    print(f"A: {top['side_a']}  B: {top['side_b']}  per-round ratios A/B, median "
          f"[{args.confidence:.0%} interval] verdict (A within {args.target:.0%} of B?)")
    print(f"{'case':<28} {'params':<6} {'rounds':>6}  {'end to end':<48} kernels")
    counts: Dict[str, int] = {}
    noise: List[float] = []
    for row in rows:
        totals, kernels = paired_ratios(row, "total"), paired_ratios(row, "kernel")
        same = row["ab"].get("same_params")
        if not totals:
            print(f"{row['case']:<28} {params_word(same):<6} {0:>6}  (no round timed both sides)")
            counts["untimed"] = counts.get("untimed", 0) + 1
            continue
        total, kernel = (describe(totals, args.confidence, args.target),
                         describe(kernels, args.confidence, args.target))
        counts[total["verdict"]] = counts.get(total["verdict"], 0) + 1
        if same is True and total["interval"]:
            noise.append((total["interval"][1] - total["interval"][0]) / 2)
        print(f"{row['case']:<28} {params_word(same):<6} {len(totals):>6}  {cell(total):<48} "
              f"{cell(kernel) if kernels else '-'}")
    words = ("within", "slower", "unresolved", "too few", "untimed")
    print("end to end: " + ", ".join(f"{counts.get(word, 0)} {word}" for word in words)
          + f" (of {len(rows)} rows)")
    if noise:
        print(f"noise floor: the rows with the same values on both sides have intervals of "
              f"+-{statistics.median(noise):.3f} (median half-width; largest "
              f"+-{max(noise):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
