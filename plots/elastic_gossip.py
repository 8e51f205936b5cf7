#!/usr/bin/python3
"""Tables and figures of the Elastic Gossip experiments (experiments/elastic_gossip/, papers/elastic_gossip.md §12).

  plots/elastic_gossip.py NAME RESULT_DIR [--out FIGURE]

NAME is an experiment (e0_single_worker ... e8_scale); RESULT_DIR is what experiments/elastic_gossip/run wrote for
it: s<SEED>/<VARIANT>/ per cell. Prints the experiment's Markdown table(s) (accuracies as fractions, 4 decimals;
mean ± sample standard deviation over the seeds present, beside the base-1234 value) and writes the figure
(default RESULT_DIR/NAME.png). Reads result files only; never runs the simulator.
"""
import argparse
import csv
import glob
import json
import math
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDY = os.path.join(ROOT, "experiments", "elastic_gossip")
BASE_SEED = 1234
MODEL_BYTES = 2913290 * 4  # the thesis's MLP in fp32 (papers/elastic_gossip.md §8)
THESIS_UPDATES = 40000


def merge(a, b):
    """JSON merge patch (RFC 7386), as dtsim applies a variant to its experiment."""
    if not isinstance(b, dict):
        return b
    out = dict(a) if isinstance(a, dict) else {}
    for k, v in b.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


class Cell:
    """One variant of the experiment: its configuration and its results per seed."""

    def __init__(self, name, config, root):
        self.name, self.config = name, config
        self.runs = {}
        for d in sorted(glob.glob(os.path.join(root, "s*", name, "summary.json"))):
            seed = int(os.path.basename(os.path.dirname(os.path.dirname(d)))[1:])
            with open(d) as f:
                self.runs[seed] = (json.load(f), os.path.dirname(d))

    def alg(self, key, default=None):
        return self.config["algorithm"].get(key, default)

    def values(self, key):
        """{seed: value} of a summary figure (key 'consensus' is the aggregate's consensus distance)."""
        out = {}
        if key == "rank0_test_accuracy" and self.alg("name") == "allreduce_sgd":
            key = "test_accuracy"  # every worker holds the same model: rank 0's is the aggregate
        for seed, (s, _) in self.runs.items():
            v = s.get("aggregate", {}).get("consensus_distance") if key == "consensus" else s.get(key)
            if v is not None:
                out[seed] = v
        return out

    def metrics(self, seed):
        with open(os.path.join(self.runs[seed][1], "metrics.csv")) as f:
            return list(csv.DictReader(f))


def load(name, root):
    with open(os.path.join(STUDY, name + ".json")) as f:
        j = json.load(f)
    base = {k: v for k, v in j.items() if k != "variants"}
    cells = [Cell(v["name"], merge(base, v), root) for v in j["variants"]]
    return [c for c in cells if c.runs]


def mean_std(vals):
    vals = list(vals)
    if not vals:
        return None, None
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else None)


def fmt(v, digits=4):
    return "-" if v is None else f"{v:.{digits}f}"


def fmt_ms(vals, digits=4):
    m, s = mean_std(vals)
    if m is None:
        return "-"
    return fmt(m, digits) + ("" if s is None else f" ± {fmt(s, digits)}")


def rate(c):
    p, tau = c.alg("probability"), c.alg("period", 1)
    if p is None:
        return "-"
    if tau != 1:
        return f"tau {tau}"
    return f"1/{round(1 / p)}" if p < 1 else "1"


def method(c):
    return {"allreduce_sgd": "AR", "no_comm": "NC", "elastic_gossip": "EG", "gossip_pull": "GS"}.get(
        c.alg("name"), c.alg("name"))


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print()


def accuracy_table(cells, extra=()):
    """The per-cell table of rank-0 and aggregate accuracy (base 1234, and mean ± std over the seeds)."""
    header = ["cell", "method", "\\|W\\|", "p", *[h for h, _ in extra], "rank-0 (1234)", "rank-0 mean ± std",
              "aggregate (1234)", "aggregate mean ± std", "consensus distance", "seeds"]
    rows = []
    for c in cells:
        r0, ag = c.values("rank0_test_accuracy"), c.values("test_accuracy")
        rows.append([c.name, method(c), c.alg("workers"), rate(c), *[f(c) for _, f in extra], fmt(r0.get(BASE_SEED)),
                     fmt_ms(r0.values()), fmt(ag.get(BASE_SEED)), fmt_ms(ag.values()),
                     fmt_ms(c.values("consensus").values(), 5), len(c.runs)])
    table(header, rows)


def steps_of(cells):
    return sorted({s["steps_per_worker"] for c in cells for s, _ in c.runs.values()})


def bar_figure(cells, out, title):
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 0.55 * len(cells) + 2), 4.5), sharey=True)
    for ax, key, label in zip(axes, ("rank0_test_accuracy", "test_accuracy"), ("rank 0", "aggregate")):
        means, errs = [], []
        for c in cells:
            m, s = mean_std(c.values(key).values())
            means.append(m or 0.0)
            errs.append(s or 0.0)
        ax.bar(range(len(cells)), means, yerr=errs, capsize=3, color="tab:blue")
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels([c.name for c in cells], rotation=60, ha="right", fontsize=8)
        ax.set_title(f"{label} test accuracy (mean ± std over seeds)")
        lo = min(m - e for m, e in zip(means, errs))
        ax.set_ylim(max(0.0, lo - 0.05), min(1.0, max(m + e for m, e in zip(means, errs)) + 0.02))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def e0_single_worker(cells, out):
    c = cells[0]
    acc = c.values("test_accuracy")
    table(["seed", "test accuracy"], [[s, fmt(a)] for s, a in sorted(acc.items())])
    m, s = mean_std(acc.values())
    table(["initialisations", "min", "max", "mean", "std"],
          [[len(acc), fmt(min(acc.values())), fmt(max(acc.values())), fmt(m), fmt(s)]])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for seed in sorted(c.runs):
        rows = c.metrics(seed)
        tr = [(int(r["step"]), float(r["loss"])) for r in rows if r["kind"] == "train" and r["loss"]]
        ev = [(int(r["step"]), float(r["test_accuracy"])) for r in rows if r["kind"] == "eval" and r["rank"] == "0"]
        if tr:
            a1.plot(*zip(*tr), label=f"seed {seed}")
        if ev:
            a2.plot(*zip(*ev), marker="o", label=f"seed {seed}")
    a1.set(xlabel="update", ylabel="training loss (minibatch)", title="E0 training loss")
    a2.set(xlabel="update", ylabel="test accuracy", title="E0 test accuracy")
    a1.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def e1_main_grid(cells, out):
    accuracy_table(cells)
    by = {(method(c), c.alg("workers"), rate(c)): c for c in cells}
    rows = []
    for (m, w, p), eg in by.items():
        gs = by.get(("GS", w, p))
        if m != "EG" or gs is None:
            continue
        line = [w, p]
        for key in ("rank0_test_accuracy", "test_accuracy"):
            a, b = eg.values(key), gs.values(key)
            d = {s: a[s] - b[s] for s in a if s in b}
            line += [fmt(d.get(BASE_SEED)), fmt_ms(d.values())]
        rows.append(line)
    print("EG − GS per cell (paired by seed):\n")
    table(["\\|W\\|", "p", "rank-0 EG − GS (1234)", "rank-0 EG − GS mean ± std", "aggregate EG − GS (1234)",
           "aggregate EG − GS mean ± std"], rows)
    bar_figure(cells, out, f"E1 main grid, {'/'.join(map(str, steps_of(cells)))} updates")


def e2_alpha_sweep(cells, out):
    accuracy_table(cells, [("alpha", lambda c: c.alg("alpha"))])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    groups = {}
    for c in cells:
        groups.setdefault((c.alg("workers"), rate(c)), []).append(c)
    for ax, key, label in zip(axes, ("rank0_test_accuracy", "test_accuracy"), ("rank 0", "aggregate")):
        for (w, p), cs in groups.items():
            ms = [mean_std(c.values(key).values()) for c in cs]
            ax.errorbar([c.alg("alpha") for c in cs], [m for m, _ in ms], yerr=[s or 0 for _, s in ms], marker="o",
                        capsize=3, label=f"|W| {w}, p {p}")
        ax.set(xlabel="alpha", ylabel="test accuracy", title=f"E2 {label}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def e3_tau_vs_p(cells, out):
    accuracy_table(cells)
    bar_figure(cells, out, "E3 pull Gossiping SGD, fixed tau against p = 1/tau")


def e4_nc8_p2048(cells, out):
    accuracy_table(cells)
    bar_figure(cells, out, "E4 no-communication at 8 workers, EG at p = 1/2048")


def e5_cifar(cells, out):
    accuracy_table(cells)
    print("(rank 3's accuracy, the thesis's check of BN statistics, is not evaluated: dtsim evaluates rank 0 and the\n"
          "aggregate, and cifar10_quick has no batch norm.)\n")
    bar_figure(cells, out, "E5 synthetic CIFAR-format data, cifar10_quick")


def per_step(c, key):
    s, _ = c.runs[min(c.runs)]
    steps = s["steps_per_worker"]
    if key == "bytes":
        return statistics.fmean(s["bytes_sent_per_rank"]) / steps
    return s["simulated_time_s"] / steps


def expected_bytes(c):
    w, p = c.alg("workers"), c.alg("probability")
    if c.alg("name") == "allreduce_sgd":
        return 2 * (w - 1) / w * MODEL_BYTES
    return (2 if c.alg("name") == "elastic_gossip" else 1) * p * MODEL_BYTES


def e6_comm_cost(cells, out):
    rows = []
    for c in cells:
        t = per_step(c, "time")
        rows.append([c.name.split("_")[0], method(c), rate(c), c.alg("sync", "-"), f"{per_step(c, 'bytes') / 2**20:.4f}",
                     f"{expected_bytes(c) / 2**20:.4f}", f"{t * 1e3:.3f}", f"{t * THESIS_UPDATES / 60:.1f}"])
    table(["platform", "method", "p", "sync", "MiB sent per worker per step", "§8 model (MiB)",
           "simulated ms per iteration", "simulated min to 40,000 updates"], rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for plat, style in (("vm", "-"), ("ec2", "--")):
        for m in ("EG", "GS"):
            for sync in ("global", "shared"):
                cs = [c for c in cells if c.name.startswith(plat + "_") and method(c) == m and c.alg("sync") == sync]
                if not cs:
                    continue
                xs = [c.alg("probability") for c in cs]
                axes[0].loglog(xs, [per_step(c, "bytes") for c in cs], style, marker="o", label=f"{plat} {m} {sync}")
                axes[1].semilogx(xs, [per_step(c, "time") * 1e3 for c in cs], style, marker="o",
                                 label=f"{plat} {m} {sync}")
        for c in cells:
            if c.name.startswith(plat + "_") and method(c) == "AR":
                axes[0].axhline(per_step(c, "bytes"), ls=style, color="k", lw=0.8, label=f"{plat} AR")
                axes[1].axhline(per_step(c, "time") * 1e3, ls=style, color="k", lw=0.8, label=f"{plat} AR")
    axes[0].set(xlabel="p", ylabel="bytes sent per worker per step", title="E6 traffic")
    axes[1].set(xlabel="p", ylabel="simulated ms per iteration", title="E6 time per iteration")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def e7_straggler(cells, out):
    by = {c.name: c for c in cells}
    rows, labels, none_t, slow_t = [], [], [], []
    for c in cells:
        if not c.name.endswith("_none") or c.name.replace("_none", "_2x") not in by:
            continue
        s = by[c.name.replace("_none", "_2x")]
        a, b = per_step(c, "time"), per_step(s, "time")
        rows.append([method(c), rate(c), c.alg("sync", "-"), f"{a * 1e3:.3f}", f"{b * 1e3:.3f}", f"{b / a:.2f}"])
        labels.append(c.name.replace("_none", ""))
        none_t.append(a * 1e3)
        slow_t.append(b * 1e3)
    table(["method", "p", "sync", "ms per iteration, no straggler", "ms per iteration, rank 1 2x slower",
           "slowdown"], rows)
    fig, ax = plt.subplots(figsize=(9, 4))
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], none_t, 0.4, label="no straggler")
    ax.bar([i + 0.2 for i in x], slow_t, 0.4, label="rank 1 2x slower")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set(ylabel="simulated ms per iteration", title="E7 straggler sensitivity")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def e8_scale(cells, out):
    accuracy_table(cells, [("batch/worker", lambda c: c.alg("batch_size")),
                           ("eta", lambda c: c.alg("optimizer", {}).get("lr"))])
    fig, ax = plt.subplots(figsize=(7, 4))
    for c in cells:
        rows = c.metrics(min(c.runs))
        pts = [(int(r["step"]), float(r["consensus_distance"])) for r in rows
               if r["kind"] == "aggregate" and r["consensus_distance"]]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=c.name)
    ax.set(xlabel="update", ylabel="consensus distance", title="E8 consensus distance (seed 1234)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("root")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    draw = globals().get(args.name)
    if not args.name.startswith("e") or draw is None:
        raise SystemExit(f"elastic_gossip.py: unknown experiment '{args.name}'")
    cells = load(args.name, args.root)
    if not cells:
        raise SystemExit(f"elastic_gossip.py: no results under {args.root}")
    steps = steps_of(cells)
    print(f"### {args.name} ({'/'.join(map(str, steps))} updates per worker, seeds "
          f"{', '.join(map(str, sorted({s for c in cells for s in c.runs})))})\n")
    draw(cells, args.out or os.path.join(args.root, args.name + ".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
