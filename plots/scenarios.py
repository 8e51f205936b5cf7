#!/usr/bin/python3
"""Tables and figures of the scenario studies (experiments/scenarios/, issue 15).

  plots/scenarios.py NAME RESULT_DIR [--out FIGURE]

NAME is a_stragglers, b_determinism or c_jitter; RESULT_DIR is what experiments/scenarios/run wrote for it.
Prints the study's Markdown table(s) and writes the figure (default RESULT_DIR/NAME.png). Reads result files only;
never runs the simulator. All times are simulated.
"""
import argparse
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easgd_hpc_read as R  # noqa: E402
from determinism import determinism  # noqa: E402

STRAGGLERS = ["none", "2x", "10x"]
PLATFORMS = {"testbed": "4-GPU M40 testbed", "ec2": "EC2-like 10 Gb/s K80 cluster"}


def worker_times_per_step(d):
    """Each rank's last logged training time divided by its step count (ranks that log training steps)."""
    last = {}
    for r in R.rows(d):
        if r["kind"] == "train" and r["step"]:
            rank, step, t = int(r["rank"]), int(r["step"]), float(r["time_s"])
            if step > 0 and (rank not in last or step >= last[rank][0]):
                last[rank] = (step, t)
    return {rank: t / step for rank, (step, t) in last.items()}


def a_stragglers(root, out):
    fig, axes = plt.subplots(2, 2, figsize=(14, 8))
    for row, (plat, title) in enumerate(PLATFORMS.items()):
        v = R.variants(os.path.join(root, plat))
        algs = list(dict.fromkeys(n.rsplit("_", 1)[0] for n in v))
        curves = {n: R.accuracy_curve(d) for n, d in v.items()}
        target = min(max(a for _, a in c) for c in curves.values() if c)
        body, per_iter, to_acc = [], {}, {}
        for a in algs:
            base = None
            for s in STRAGGLERS:
                d = v.get(f"{a}_{s}")
                if d is None:
                    continue
                t_iter = R.time_s(d) / R.steps(d)
                base = base or t_iter
                fastest = min(worker_times_per_step(d).values())
                t_acc = R.first_time_at_or_above(curves[f"{a}_{s}"], target)
                per_iter[(a, s)], to_acc[(a, s)] = t_iter, t_acc
                body.append([a, s, 1e3 * t_iter, t_iter / base, 1e3 * fastest, R.summary(d)["test_accuracy"], t_acc])
        print(f"\n5a, {title}: time per iteration (the run's simulated time / steps per worker, set by the slowest "
              f"worker), the fastest worker's own, and simulated time to test accuracy {target:.4f} (the highest "
              "accuracy every run reaches); real numerics\n")
        print(R.table(["method", "straggler", "time per iteration (ms)", "vs none", "fastest worker (ms/step)",
                       "final accuracy", f"time to {target:.4f} (s)"], body))
        width = 0.27
        for k, s in enumerate(STRAGGLERS):
            xs = [i + (k - 1) * width for i in range(len(algs))]
            axes[row][0].bar(xs, [per_iter.get((a, s), 0) for a in algs], width, label=f"straggler {s}")
            axes[row][1].bar(xs, [to_acc.get((a, s)) or 0 for a in algs], width, label=f"straggler {s}")
        for col, what in enumerate(["time per iteration (s)", f"time to accuracy {target:.3f} (s)"]):
            ax = axes[row][col]
            ax.set_xticks(range(len(algs)), algs, rotation=20, fontsize=8)
            ax.set_ylabel(f"simulated {what}")
            ax.set_title(f"{title}: {what.split(' (')[0]}")
            ax.legend(fontsize=8)
    fig.suptitle("5a: one straggler (rank 1) 2x / 10x slower; simulated times, real numerics (MLP, Fashion-MNIST)")
    return fig


PERTURBATIONS = {"repeat": "exact repeat", "straggler_2x": "worker 1 2x slower", "straggler_10x": "worker 1 10x slower",
                 "jitter": "lognormal jitter (sigma 0.2)"}


def b_determinism(root, out):
    return determinism(root, PERTURBATIONS,
                       "5b (H10 with real stragglers): final model hash of each run against the reference run of "
                       "the same method (same seed)",
                       "5b: final model identical to the reference run? (simulated, real numerics, same seed)")


def c_jitter(root, out):
    with open(os.path.join(root, "sweep.json")) as f:
        points = json.load(f)["points"]
    runs = {}  # (workers, q, f) -> (time per iteration, compute per step)
    for p in points:
        sets = dict(a.split("=", 1) for a in p["sets"])  # the point's --set assignments
        workers = int(sets["algorithm.workers"])
        j = (json.loads(sets["scenario"]).get("jitter") or [{}])[0]
        q, fac = j.get("probability", 0.0), j.get("factor", 1.0)
        s = R.summary(os.path.join(root, p["id"]))
        fb = statistics.mean(r["seconds"]["forward_backward"] for r in s["time_breakdown"]["ranks"])
        runs[(workers, q, fac)] = (s["simulated_time_s"] / s["steps_per_worker"], fb / s["steps_per_worker"])
    workers = sorted({w for w, _, _ in runs})
    qs = sorted({q for _, q, _ in runs if q > 0})
    facs = sorted({f for _, q, f in runs if q > 0})
    body = []
    fig, axes = plt.subplots(1, len(workers), figsize=(5 * len(workers), 4), sharey=False)
    for ax, w in zip(axes if len(workers) > 1 else [axes], workers):
        t0, c = runs[(w, 0.0, 1.0)]
        for fac in facs:
            ys = [runs[(w, q, fac)][0] / t0 for q in qs]
            # Expected: the step waits for the slowest worker; one slow among w with probability 1 - (1 - q)^w.
            model = [1 + c / t0 * (fac - 1) * (1 - (1 - q) ** w) for q in qs]
            line = ax.plot(qs, ys, "o-", label=f"factor {fac:g}")[0]
            ax.plot(qs, model, "--", color=line.get_color(), alpha=0.6)
            for q, y, m in zip(qs, ys, model):
                body.append([w, q, fac, runs[(w, q, fac)][0], y, m])
        ax.set_xscale("log")
        ax.set_xlabel("probability of a slow step (per worker and step)")
        ax.set_ylabel("time per iteration / without jitter")
        ax.set_title(f"{w} workers (no jitter: {t0:.3f} s/iteration)")
        ax.legend(fontsize=8)
    print("5c: allreduce SGD (ring) time per iteration under two-point jitter on every worker; simulated, modeled "
          "numerics (ResNet-50, batch 32, EC2 10 Gb/s); expected = 1 + (compute / iteration) (f - 1) (1 - (1 - q)^P)\n")
    print(R.table(["workers", "q", "factor", "time per iteration (s)", "vs no jitter", "expected"], body))
    fig.suptitle("5c: allreduce SGD under slow steps (simulated, modeled numerics); dashed: slowest-worker estimate")
    return fig


EXPERIMENTS = {f.__name__: f for f in (a_stragglers, b_determinism, c_jitter)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=sorted(EXPERIMENTS))
    ap.add_argument("result_dir")
    ap.add_argument("--out", default=None, help="figure (.png or .svg); default RESULT_DIR/NAME.png")
    args = ap.parse_args()
    out = args.out or os.path.join(args.result_dir, args.name + ".png")
    fig = EXPERIMENTS[args.name](args.result_dir, out)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"\nfigure: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
