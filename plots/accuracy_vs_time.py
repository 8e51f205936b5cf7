#!/usr/bin/python3
"""Test accuracy against time (simulated, or wall-clock for --backend mpi runs) for dtsim result directories.

Reads each DIR/metrics.csv (the rows with a test_accuracy) and DIR/summary.json; never runs the simulator.
Where the workers hold different models (gossip), the accuracy of their mean (rows of kind "aggregate") is
drawn dashed in the same colour as the evaluated model.
  plots/accuracy_vs_time.py results/default/*/ --out results/default/accuracy_vs_time.png
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_curve(result_dir, kind="eval"):
    times, accs = [], []
    with open(os.path.join(result_dir, "metrics.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["test_accuracy"] and row.get("kind", "eval") == kind:
                times.append(float(row["time_s"]))
                accs.append(float(row["test_accuracy"]))
    with open(os.path.join(result_dir, "summary.json")) as f:
        summary = json.load(f)
    return times, accs, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="result directories (each with metrics.csv and summary.json)")
    ap.add_argument("--out", required=True, help="output image (.png or .svg)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    fig, ax = plt.subplots(figsize=(7, 4.5))
    plotted = 0
    for d in args.dirs:
        if not os.path.exists(os.path.join(d, "metrics.csv")):
            print(f"accuracy_vs_time: no metrics.csv in {d}", file=sys.stderr)
            return 2
        times, accs, s = read_curve(d)
        if not accs:
            print(f"accuracy_vs_time: {d} has no evaluated accuracy (modeled numerics?)", file=sys.stderr)
            continue
        label = f"{s.get('variant') or s['algorithm']} ({s['workers']} workers)"
        line = ax.plot(times, accs, marker="o", markersize=3, label=label)[0]
        agg_times, agg_accs, _ = read_curve(d, "aggregate")
        if agg_accs:
            ax.plot(agg_times, agg_accs, linestyle="--", color=line.get_color(), label=label + ", workers' mean")
        plotted += 1
    if not plotted:
        return 2
    first = json.load(open(os.path.join(args.dirs[0], "summary.json")))
    wall = first.get("backend") == "mpi"  # real runs report wall-clock seconds
    ax.set_xlabel("wall time (s)" if wall else "simulated time (s)")
    ax.set_ylabel("test accuracy")
    ax.set_title(args.title or f"{first['experiment']}: {first['model']}, test accuracy vs {'wall' if wall else 'simulated'} time")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
