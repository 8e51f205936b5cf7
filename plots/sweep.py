#!/usr/bin/python3
"""One figure of a dtsim sweep's table against one varied key, a line per value of another key (and variant).

Reads DIR/table.csv as `dtsim sweep` writes it; never runs anything.
  plots/sweep.py results/bw/table.csv --x platform.link_bandwidth_bps --y simulated_time_s \
      --series algorithm.workers --out results/bw/plot.png
Rows that differ in keys other than x and series (seeds, say) are averaged, and the spread is drawn as a band.
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table")
    ap.add_argument("--x", required=True, help="a varied key (a column of the table)")
    ap.add_argument("--y", required=True, help="a figure (a column of the table)")
    ap.add_argument("--series", default="", help="a varied key: one line per value")
    ap.add_argument("--out", required=True, help="PNG file")
    args = ap.parse_args()
    with open(args.table, newline="") as f:
        rows = list(csv.DictReader(f))
    for key in [args.x, args.y] + ([args.series] if args.series else []):
        if not rows or key not in rows[0]:
            sys.exit(f"sweep.py: {args.table} has no column {key!r}")
    lines = defaultdict(lambda: defaultdict(list))  # series label -> x -> [y]
    for r in rows:
        x, y = number(r[args.x]), number(r[args.y])
        if x is None or y is None:
            continue
        label = " ".join(p for p in [f"{args.series}={r[args.series]}" if args.series else "", r["variant"]] if p)
        lines[label][x].append(y)
    if not lines:
        sys.exit(f"sweep.py: no numeric {args.x!r} / {args.y!r} pairs in {args.table}")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in sorted(lines, key=lambda s: [number(w.split("=")[-1]) or 0 for w in s.split()] + [s]):
        xs = sorted(lines[label])
        mean = [sum(lines[label][x]) / len(lines[label][x]) for x in xs]
        ax.plot(xs, mean, marker="o", label=label or args.y)
        lo = [min(lines[label][x]) for x in xs]
        hi = [max(lines[label][x]) for x in xs]
        if lo != hi:
            ax.fill_between(xs, lo, hi, alpha=0.2)
    all_x = [x for line in lines.values() for x in line]
    if min(all_x) > 0 and max(all_x) / min(all_x) >= 100:  # a range of decades, as bandwidths are
        ax.set_xscale("log")
    all_y = [y for line in lines.values() for ys in line.values() for y in ys]
    if min(all_y) > 0 and max(all_y) / min(all_y) >= 100:
        ax.set_yscale("log")
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y)
    ax.grid(True, alpha=0.3)
    if len(lines) > 1 or args.series:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)


if __name__ == "__main__":
    main()
