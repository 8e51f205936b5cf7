#!/usr/bin/python3
"""A run's timeline (run.trace: "chrome") as a picture: one row per rank and activity, coloured by what the
time went to (compute, updates, communication on the wire, waiting), against simulated time; below it, the
share of bandwidth in use on the busiest links (the trace's link counters), one line each.

Reads DIR/trace.json; never runs the simulator. For the full trace, open DIR/trace.json in https://ui.perfetto.dev
  plots/timeline.py results/x/easgd_async --out timeline.png [--from 0.1 --to 0.3] [--ranks 0-4] [--links 4]
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLOURS = {
    "forward_backward": "#4c72b0",
    "gpu_update": "#55a868",
    "cpu_update": "#8fd19e",
    "cpu_gpu_data": "#dd8452",
    "inter_node_parameter": "#c44e52",
    "cpu_gpu_parameter": "#da8bc3",
    "gpu_gpu_parameter": "#937860",
    "idle": "#dddddd",
}


def carried(points, t0, t1):
    """The share of a link integrated over [t0, t1] (link-seconds), from its counter points."""
    t0 = 0 if t0 is None else t0
    total = 0.0
    for (a, v), (b, _) in zip(points, points[1:] + [(t1, 0)]):
        lo, hi = max(a, t0), min(b, t1)
        if hi > lo:
            total += v * (hi - lo)
    return total


def parse_ranks(text):
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a result directory with trace.json")
    ap.add_argument("--out", required=True, help="output image (.png or .svg)")
    ap.add_argument("--from", dest="t0", type=float, default=None, help="start, simulated seconds")
    ap.add_argument("--to", dest="t1", type=float, default=None, help="end, simulated seconds")
    ap.add_argument("--ranks", type=parse_ranks, default=None, help="a rank or a range, e.g. 0-7")
    ap.add_argument("--links", type=int, default=4, help="the N links that carried most, below the ranks (0: none)")
    args = ap.parse_args()

    path = os.path.join(args.dir, "trace.json")
    if not os.path.exists(path):
        print(f"timeline: no trace.json in {args.dir} (run it with \"run\": {{\"trace\": \"chrome\"}})", file=sys.stderr)
        return 2
    events = json.load(open(path))["traceEvents"]
    names = {}
    spans = {}
    links = {}  # link -> [(t, share)], the share holding from t on
    for e in events:
        if e["ph"] == "C":
            links.setdefault(e["name"], []).append((e["ts"] * 1e-6, e["args"]["share"]))
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            if args.ranks and not args.ranks[0] <= e["pid"] <= args.ranks[1]:
                continue
            t0, t1 = e["ts"] * 1e-6, (e["ts"] + e["dur"]) * 1e-6
            if (args.t0 is not None and t1 < args.t0) or (args.t1 is not None and t0 > args.t1):
                continue
            spans.setdefault((e["pid"], e["tid"]), []).append((t0, t1 - t0, e["name"]))
    if not spans:
        print("timeline: nothing to draw in that window", file=sys.stderr)
        return 2
    tracks = sorted(spans, key=lambda k: (k[0], not names.get(k, "").startswith("rank"), k[1]))
    t_end = max(t0 + w for key in tracks for t0, w, _ in spans[key])
    load = {n: carried(pts, args.t0, args.t1 if args.t1 is not None else t_end) for n, pts in links.items()}
    busiest = [n for n in sorted(load, key=lambda n: -load[n])[:max(0, args.links)] if load[n] > 0]
    height = 0.35 * len(tracks) + 1.5
    if busiest:
        fig, (ax, lx) = plt.subplots(2, 1, sharex=True, figsize=(10, height + 2.2),
                                     gridspec_kw={"height_ratios": [height, 2.2]})
    else:
        fig, ax = plt.subplots(figsize=(10, height))
    for row, key in enumerate(tracks):
        for t0, width, name in spans[key]:
            ax.broken_barh([(t0, width)], (row - 0.4, 0.8), facecolors=COLOURS.get(name, "#999999"), linewidth=0)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([names.get(k, f"rank {k[0]}") if names.get(k, "").startswith("rank")
                        else f"rank {k[0]} {names.get(k, '')}" for k in tracks])
    ax.invert_yaxis()
    if args.t0 is not None or args.t1 is not None:
        ax.set_xlim(args.t0, args.t1)
    if busiest:
        for n in busiest:
            pts = links[n] + [(t_end, links[n][-1][1])]
            lx.step([t for t, _ in pts], [v for _, v in pts], where="post", label=n, linewidth=1)
        lx.set_ylabel("link share")
        lx.set_ylim(0, 1.05)
        lx.legend(fontsize=7, loc="upper right", frameon=False)
        lx.set_xlabel("simulated time (s)")
    else:
        ax.set_xlabel("simulated time (s)")
    used = sorted({name for key in tracks for _, _, name in spans[key]})
    ax.legend(handles=[Patch(color=COLOURS.get(n, "#999999"), label=n) for n in used], loc="upper center",
              bbox_to_anchor=(0.5, -0.12 - 0.3 / max(1, len(tracks))), ncol=4, fontsize=8, frameon=False)
    summary_path = os.path.join(args.dir, "summary.json")
    if os.path.exists(summary_path):
        s = json.load(open(summary_path))
        ax.set_title(f"{s.get('variant') or s['algorithm']}: {s['workers']} workers, {s['model']}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
