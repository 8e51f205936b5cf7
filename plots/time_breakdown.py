#!/usr/bin/python3
"""Time breakdown of simulated runs (papers/easgd_hpc.md §11): one stacked bar per result directory, the
categories of summary.json's time_breakdown (view "run" by default: the critical path, whose categories add
up to the simulated time), with the communication ratio on top; prints the same as a table, with speedups.

A DIR is a result directory (with summary.json) or an experiment's directory of variants (its subdirectories
with a summary.json, in the experiment's variant order when config.resolved.json says it). Never runs the
simulator.
  plots/time_breakdown.py results/easgd_hpc/h1_time_breakdown --out h1.png --speedup-over original_star original
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CATEGORIES = [  # summary.json key, label, colour
    ("gpu_gpu_parameter", "GPU-GPU para comm", "#1f77b4"),
    ("cpu_gpu_data", "CPU-GPU data comm", "#17becf"),
    ("cpu_gpu_parameter", "CPU-GPU para comm", "#9467bd"),
    ("inter_node_parameter", "inter-node para comm", "#8c564b"),
    ("forward_backward", "for/backward", "#2ca02c"),
    ("gpu_update", "GPU update", "#ff7f0e"),
    ("cpu_update", "CPU update", "#d62728"),
    ("idle", "idle / wait", "#c7c7c7"),
]


def result_dirs(paths):
    out = []
    for p in paths:
        if os.path.exists(os.path.join(p, "summary.json")):
            out.append(p)
            continue
        subs = sorted(d for d in os.listdir(p) if os.path.exists(os.path.join(p, d, "summary.json")))
        if not subs:
            raise SystemExit(f"time_breakdown: no summary.json in {p} or its subdirectories")
        order = variant_order(os.path.join(p, subs[0]))
        subs.sort(key=lambda d: order.index(d) if d in order else len(order))
        out.extend(os.path.join(p, d) for d in subs)
    return out


def variant_order(result_dir):
    try:
        with open(os.path.join(result_dir, "config.resolved.json")) as f:
            cfg = json.load(f)
        return [v["name"] for v in cfg.get("variants", [])]
    except (OSError, KeyError, ValueError):
        return []


def load(result_dir, view):
    with open(os.path.join(result_dir, "summary.json")) as f:
        s = json.load(f)
    if "time_breakdown" not in s:
        raise SystemExit(f"time_breakdown: {result_dir}/summary.json has no time_breakdown (not a simulator run?)")
    v = s["time_breakdown"][view]
    if view == "ranks" or v is None:
        raise SystemExit(f"time_breakdown: view {view} is not a single breakdown in {result_dir}")
    label = s.get("variant") or s["algorithm"]
    return label, v, s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="result directories, or experiment directories of variants")
    ap.add_argument("--out", required=True, help="output image (.png or .svg)")
    ap.add_argument("--view", default="run", choices=["run", "master", "workers"])
    ap.add_argument("--speedup-over", nargs="*", default=[], metavar="LABEL",
                    help="also print every run's speedup over these runs (by variant name)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    runs = [load(d, args.view) for d in result_dirs(args.dirs)]
    totals = {label: v["total_s"] for label, v, _ in runs}
    for ref in args.speedup_over:
        if ref not in totals:
            raise SystemExit(f"time_breakdown: --speedup-over {ref}: no such run ({', '.join(totals)})")

    head = f"{'run':<16}{'total s':>10}" + "".join(f"{k[:12]:>14}" for k, _, _ in CATEGORIES) + f"{'comm %':>9}"
    head += "".join(f"{'x ' + r:>18}" for r in args.speedup_over)
    print(head)
    for label, v, _ in runs:
        row = f"{label:<16}{v['total_s']:>10.3f}"
        row += "".join(f"{v['seconds'][k]:>14.4f}" for k, _, _ in CATEGORIES)
        row += f"{100 * v['communication_ratio']:>8.1f}%"
        row += "".join(f"{totals[r] / v['total_s']:>18.2f}" for r in args.speedup_over)
        print(row)

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(runs) + 3), 4.8))
    xs = range(len(runs))
    bottom = [0.0] * len(runs)
    for key, name, colour in CATEGORIES:
        heights = [v["seconds"][key] for _, v, _ in runs]
        if not any(h > 0 for h in heights):
            continue
        ax.bar(xs, heights, bottom=bottom, label=name, color=colour, width=0.65)
        bottom = [b + h for b, h in zip(bottom, heights)]
    for x, (_, v, _) in zip(xs, runs):
        ax.annotate(f"{100 * v['communication_ratio']:.0f}% comm", (x, v["total_s"]), ha="center", va="bottom",
                    fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([label for label, _, _ in runs], rotation=20, ha="right")
    ax.set_ylabel("simulated time (s)")
    first = runs[0][2]
    ax.set_title(args.title or f"{first['experiment']}: time breakdown ({args.view} view)")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
