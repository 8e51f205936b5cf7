#!/usr/bin/python3
"""Tables and figures of the EASGD-for-HPC experiments (experiments/easgd_hpc/, papers/easgd_hpc.md §15).

  plots/easgd_hpc.py NAME RESULT_DIR [--out FIGURE]

NAME is an experiment (h2_h3_methods, h4_packing, h5_knl_partition, h6_weak_scaling, h7_intel_caffe,
h8_cifar_knl, h9_asymptotics, h10_determinism); RESULT_DIR is what `dtsim run` wrote for it (one
subdirectory per variant). Prints the experiment's Markdown table(s) and writes the figure (default
RESULT_DIR/NAME.png). Reads result files only; never runs the simulator.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easgd_hpc_read as R  # noqa: E402
from determinism import determinism  # noqa: E402

PAIRS = [("easgd_async", "async_sgd"), ("measgd_async", "async_msgd"), ("easgd_hogwild", "hogwild_sgd"),
         ("easgd_sync3", "easgd_original")]


def h2_h3_methods(root, out):
    v = R.variants(root)
    curves = {n: R.accuracy_curve(d) for n, d in v.items()}
    # A method learned when its best accuracy reaches twice that of the initial model (step 0, about chance);
    # the common target of the ranking (H3) is the highest accuracy every method that learned reaches.
    chance = max(c[0][1] for c in curves.values())
    learned = {n for n, c in curves.items() if max(a for _, a in c) >= 2 * chance}
    target = min(max(a for _, a in curves[n]) for n in learned)
    body = []
    for n, d in v.items():
        c = curves[n]
        body.append([n, R.steps(d), R.time_s(d), c[-1][1], max(a for _, a in c), R.first_time_at_or_above(c, target)])
    body.sort(key=lambda r: (r[5] is None, r[5] or 0.0))
    print(f"H3: all eight methods; ranked by simulated time to test accuracy {target:.4f} (the highest accuracy "
          f"that every method which learned reaches; did not learn, best accuracy below {2 * chance:.2f}: "
          f"{', '.join(sorted(set(curves) - learned)) or 'none'})\n")
    print(R.table(["method", "steps/worker", "simulated time (s)", "final accuracy", "best accuracy",
                   f"time to {target:.4f} (s)"], body))
    pair_rows = []
    for a, b in PAIRS:
        if a not in curves or b not in curves:
            continue
        if a not in learned or b not in learned:  # one did not learn: no common target
            pair_rows.append([f"{a} vs {b}", None, None, None, f"{a if a in learned else b} ({b if a in learned else a} "
                              "did not learn)"])
            continue
        t = min(max(x for _, x in curves[a]), max(x for _, x in curves[b]))
        ta, tb = R.first_time_at_or_above(curves[a], t), R.first_time_at_or_above(curves[b], t)
        pair_rows.append([f"{a} vs {b}", t, ta, tb, a if ta <= tb else b])
    print("\nH2: the four (new, counterpart) pairs; time to the highest accuracy both reach\n")
    print(R.table(["pair", "target accuracy", "time new (s)", "time counterpart (s)", "first"], pair_rows))

    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, (a, b) in zip(axes.flat[:4], PAIRS):
        for n in (a, b):
            if n in curves:
                ax.plot(*zip(*curves[n]), marker="o", markersize=3, label=n)
        ax.set_title(f"{a} vs {b}")
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("test accuracy")
        ax.grid(True, alpha=0.3)
        ax.legend()
    ax = axes.flat[4]
    for n, c in curves.items():
        ax.plot([t for t, _ in c], [R.math.log10(max(1 - x, 1e-6)) for _, x in c], marker=".", label=n)
    ax.set_title("all eight: log10(1 - accuracy)")
    ax.set_xlabel("simulated time (s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    axes.flat[5].axis("off")
    fig.suptitle("H2/H3: LeNet on Fashion-MNIST (real numerics), 4 M40 testbed (modeled time)")
    return fig


def h4_packing(root, out):
    v = R.variants(root)
    body = []
    for n, d in v.items():
        s = R.summary(d)
        body.append([n, s["workers"], s["numerics"], R.time_s(d) / R.steps(d), s["messages"],
                     s.get("final_model_hash") or "-", s["test_accuracy"]])
    print("H4: Sync SGD, packed vs per-layer messages (time per iteration is modeled)\n")
    print(R.table(["variant", "workers", "numerics", "time per iteration (s)", "messages", "final model hash",
                   "test accuracy"], body))
    fig, ax = plt.subplots(figsize=(7, 4))
    modeled = [r for r in body if r[2] == "modeled"]
    ax.bar([r[0] for r in modeled], [r[3] for r in modeled], color=["C0", "C1"] * len(modeled))
    ax.set_ylabel("simulated time per iteration (s)")
    ax.set_title("H4: AlexNet/Cifar Sync SGD, packed vs per-layer (modeled)")
    ax.tick_params(axis="x", rotation=20)
    return fig


def h5_knl_partition(root, out):
    v = R.variants(root)
    rows = []
    for n, d in v.items():
        cfg = R.config(d)
        p = cfg["platform"]["chip_partition"]["groups"]
        tr = cfg["data"]
        data_bytes = 4 * tr["train_samples"] * tr["channels"] * tr["height"] * tr["width"]
        weight_bytes = 4 * cfg["model"]["num_params"]
        samples = p * R.steps(d) * cfg["algorithm"]["batch_size"]
        rows.append([p, R.steps(d), samples, R.time_s(d), R.time_s(d) / R.steps(d), p * (weight_bytes + data_bytes) / 1e6])
    rows.sort()
    rate1 = rows[0][2] / rows[0][3]
    # Speedup in samples per second: the epoch's floor(shard / batch) steps cover slightly fewer samples as P grows.
    body = [[p, st, n, t, ts, (n / t) / rate1, fp] for p, st, n, t, ts, fp in rows]
    print("H5: one KNL in P groups, AlexNet/Cifar, one epoch (modeled time; footprint = P x (weights + data), fp32)\n")
    print(R.table(["P", "steps per group", "samples", "time for one epoch (s)", "time per step (s)",
                   "speedup over P=1 (samples/s)", "MCDRAM footprint (MB)"], body))
    rej = os.path.join(root, "p32_rejected.txt")
    if os.path.exists(rej):
        print("\nP = 32: " + open(rej).read().strip())
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.plot([r[0] for r in body], [r[5] for r in body], marker="o")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("groups P")
    a1.set_ylabel("speedup over P = 1 (samples/s)")
    a1.grid(True, alpha=0.3)
    a2.bar([str(r[0]) for r in body], [r[6] for r in body])
    a2.axhline(16e3, color="r", linestyle="--", label="MCDRAM 16 GB")
    a2.set_xlabel("groups P")
    a2.set_ylabel("footprint (MB)")
    a2.legend()
    fig.suptitle("H5: KNL partitioned into P groups (modeled)")
    return fig


def scaling_rows(v, prefix):
    """(nodes, steps, total time, efficiency T1/TN, per-iteration overhead over 1 node) for variants prefix_nN."""
    pts = sorted((int(n.rsplit("_n", 1)[1]), d) for n, d in v.items() if n.rsplit("_n", 1)[0] == prefix)
    if not pts:
        return []
    t1 = R.time_s(pts[0][1])
    return [[n, R.steps(d), R.time_s(d), t1 / R.time_s(d), (R.time_s(d) - t1) / R.steps(d)] for n, d in pts]


def h6_weak_scaling(root, out):
    v = R.variants(root)
    models = sorted({n.rsplit("_n", 1)[0] for n in v})
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for m in models:
        rows = scaling_rows(v, m)
        how = "in listing order, no overlap (easgd_sync variant 2)" if "_noovl" in m else \
            "exchange overlapped with F/B (easgd_sync variant 3)"
        print(f"H6: Algorithm 4 weak scaling, {m.split('_')[0]}, {how}; modeled time, 68 cores per node\n")
        print(R.table(["nodes", "cores", "iterations", "total time (s)", "efficiency T(1)/T(N)",
                       "overhead per iteration (s)"], [[r[0], 68 * r[0]] + r[1:] for r in rows]))
        print()
        label = m.replace("_noovl", ": listing order (variant 2)") if "_noovl" in m else m + ": overlapped (variant 3)"
        a1.plot([r[0] for r in rows], [r[3] for r in rows], marker="o", label=label)
        a2.plot([r[0] for r in rows], [r[4] for r in rows], marker="o", label=label)
    for a, y in ((a1, "weak-scaling efficiency T(1)/T(N)"), (a2, "communication overhead per iteration (s)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("KNL nodes")
        a.set_ylabel(y)
        a.grid(True, alpha=0.3)
        a.legend()
    fig.suptitle("H6: Sync EASGD (Algorithm 4) on Cori KNL, Aries dragonfly (modeled)")
    return fig


def h7_intel_caffe(root, out):
    v = R.variants(root)
    body = []
    for m in ("googlenet", "vgg19"):
        for method in ("caffe", "alg4"):
            rows = scaling_rows(v, f"{m}_{method}")
            for r in rows[1:]:
                body.append([m, "Intel-Caffe-style sync SGD (ring allreduce)" if method == "caffe" else
                             "Algorithm 4 (Sync EASGD)", r[0], 68 * r[0], r[2], r[3]])
    print("H7: weak-scaling efficiency at 32 nodes (2176 cores), modeled time\n")
    print(R.table(["model", "method", "nodes", "cores", "total time (s)", "efficiency T(1)/T(N)"], body))
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{r[0]}\n{'caffe' if 'Caffe' in r[1] else 'alg4'}" for r in body]
    ax.bar(labels, [r[5] for r in body], color=["C1", "C0"] * len(body))
    ax.set_ylabel("efficiency at 32 nodes")
    ax.set_ylim(0, 1.05)
    ax.set_title("H7: Intel-Caffe-style sync SGD vs Algorithm 4 (modeled)")
    return fig


def h8_cifar_knl(root, out):
    v = R.variants(root)
    train = {n: R.train_loss_curve(d) for n, d in v.items()}
    test = {n: R.test_loss_curve(d) for n, d in v.items()}
    # Fixed loss: the lowest test loss every node count reaches; fixed time: the shortest run's end.
    target = max(min(x for _, x in c) for c in test.values())
    t_fix = min(R.time_s(d) for d in v.values())
    body = []
    for n, d in sorted(v.items(), key=lambda kv: R.summary(kv[1])["workers"]):
        s = R.summary(d)
        body.append([s["workers"], R.steps(d), R.time_s(d), s["test_loss"], s["test_accuracy"],
                     R.first_time_at_or_below(test[n], target), R.value_at(test[n], t_fix)])
    print(f"H8: Algorithm 4 on KNL nodes, LeNet/Fashion-MNIST (real numerics, modeled time); fixed loss "
          f"{target:.4f}, fixed time {t_fix:.4f} s\n")
    print(R.table(["nodes", "iterations", "simulated time (s)", "final test loss", "final test accuracy",
                   f"time to test loss {target:.4f} (s)", f"test loss at {t_fix:.4f} s"], body))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for n in train:
        a1.plot(*zip(*train[n]), label=n)
        a2.plot(*zip(*test[n]), marker="o", label=n)
    a1.set_ylabel("training loss (mean over workers)")
    a2.set_ylabel("test loss of the center")
    for a in (a1, a2):
        a.set_xlabel("simulated time (s)")
        a.grid(True, alpha=0.3)
        a.legend()
    fig.suptitle("H8: objective loss vs time per KNL node count")
    return fig


def per_pass(d):
    """H9's seconds per pass over all workers: summary.json's window (run.measure_from_step, past the parameter
    server's start-up burst) when the run has one, else the whole run's simulated time / steps."""
    w = R.summary(d).get("window")
    if w and w.get("s_per_step"):
        return w["s_per_step"]
    return R.time_s(d) / R.steps(d)


def h9_asymptotics(root, out):
    nets = {"fdr_ib": "fdr", "qdr_ib": "qdr", "ethernet_10g": "eth"}
    algs = {"easgd_original": "rr", "easgd_async": "ps", "easgd_sync": "sync"}
    v = R.sweep_points(root, lambda r: f"{nets[r['platform.link_preset']]}_{algs[r['algorithm']]}_p{r['algorithm.workers']}")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharey=True)
    nets = {"fdr": "FDR IB", "qdr": "QDR IB", "eth": "10GbE"}
    algs = {"rr": "round robin (easgd_original)", "ps": "param. server (easgd_async)", "sync": "Sync EASGD (trees)"}
    body = []
    for ax, (net, label) in zip(axes, nets.items()):
        for alg, alabel in algs.items():
            pts = sorted((int(n.rsplit("_p", 1)[1]), d) for n, d in v.items() if n.startswith(f"{net}_{alg}_p"))
            if not pts:
                continue
            ax.plot([p for p, _ in pts], [per_pass(d) for _, d in pts], marker="o", label=alabel)
            for p, d in pts:
                cfg = R.config(d)
                link = cfg["platform"]
                w_bytes = 4 * cfg["model"]["num_params"]
                c = 2 * link["link_latency_s"] + w_bytes * 8 / link["link_bandwidth_bps"]
                theory = 2 * p * c if alg != "sync" else 2 * R.log2(p) * c
                sim = per_pass(d)
                body.append([label, alabel, p, sim, theory, sim / theory])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(label)
        ax.set_xlabel("workers P")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("time per pass over all workers (s)")
    axes[0].legend(fontsize=8)
    windows = sorted({(w["from_step"], w["to_step"]) for w in (R.summary(d).get("window") for d in v.values()) if w})
    print("H9: time per pass over all workers in s, simulated (alpha-beta model in brackets: 2Pc for round robin "
          "and parameter server, 2 log2(P) c for the trees; c = alpha + |W| beta, |W| = AlexNet's 249 MB); zero "
          "compute, modeled time; per pass = summary.json's window.s_per_step over passes "
          + (", ".join(f"({a}, {b}]" for a, b in windows) or "- (no window: the whole run)") + "\n")
    ps = sorted({r[2] for r in body})
    pivot = {}
    for net, alg, p, sim, theory, _ in body:
        pivot.setdefault((net, alg), {})[p] = f"{sim:.3f} ({theory:.3f})"
    print(R.table(["network", "method"] + [f"P = {p}" for p in ps],
                  [[net, alg] + [cells.get(p, "-") for p in ps] for (net, alg), cells in pivot.items()]))
    fig.suptitle("H9: communication per pass vs P (modeled)")
    return fig


PERTURBATIONS = {"repeat": "exact repeat", "slow_pcie": "PCIe at half bandwidth", "slow_fb": "F/B 25 % slower",
                 "master_gpu": "master on GPU 1 (worker 1 straggles)"}


def h10_determinism(root, out):
    return determinism(root, PERTURBATIONS,
                       "H10: final model hash of each run against the reference run of the same method (same seed)",
                       "H10: final model identical to the reference run? (real numerics, same seed)")


EXPERIMENTS = {f.__name__: f for f in (h2_h3_methods, h4_packing, h5_knl_partition, h6_weak_scaling, h7_intel_caffe,
                                        h8_cifar_knl, h9_asymptotics, h10_determinism)}


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
