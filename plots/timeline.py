#!/usr/bin/python3
"""A run's timeline (run.trace: "chrome") as a picture: one row per rank and activity, coloured by what the
time went to (compute, updates, communication on the wire, waiting), against simulated time.

Reads DIR/trace.json; never runs the simulator. For the full trace, open DIR/trace.json in https://ui.perfetto.dev
  plots/timeline.py results/x/easgd_async --out timeline.png [--from 0.1 --to 0.3] [--ranks 0-4]
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
    args = ap.parse_args()

    path = os.path.join(args.dir, "trace.json")
    if not os.path.exists(path):
        print(f"timeline: no trace.json in {args.dir} (run it with \"run\": {{\"trace\": \"chrome\"}})", file=sys.stderr)
        return 2
    events = json.load(open(path))["traceEvents"]
    names = {}
    spans = {}
    for e in events:
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
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(tracks) + 1.5))
    for row, key in enumerate(tracks):
        for t0, width, name in spans[key]:
            ax.broken_barh([(t0, width)], (row - 0.4, 0.8), facecolors=COLOURS.get(name, "#999999"), linewidth=0)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([names.get(k, f"rank {k[0]}") if names.get(k, "").startswith("rank")
                        else f"rank {k[0]} {names.get(k, '')}" for k in tracks])
    ax.invert_yaxis()
    if args.t0 is not None or args.t1 is not None:
        ax.set_xlim(args.t0, args.t1)
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
