#!/usr/bin/python3
"""Tables and figures of the BIDMach experiments (experiments/bidmach/, papers/bidmach.md §15).

  plots/bidmach.py NAME RESULT_DIR [--out FIGURE]

NAME is an experiment (b1_weak_scaling, b2_parameter_server, b4_raw_allreduce, b6_model_quality, b7_straggler,
b8_dims, or its B number) or b3 / b5, which read B1's result directory. RESULT_DIR is what `dtsim run` wrote (one subdirectory
per variant). Prints the Markdown table(s) and writes the figure (default RESULT_DIR/NAME.png) where one helps.
Reads result files only. Every number printed is a prediction of the simulator (or, for B4's mpi_ rows, a wall-clock
measurement of 4 MPI ranks on one machine).

Throughput: per rank, samples / s between its first step row at or after START_S simulated seconds (the
LineMasters' start-up poll, `startup_poll_s` 2 s, comes before the first round) and its last step row; the total
is the sum over ranks.
"""
import argparse
import os
import sys

from gossipgrad import fmt, load, mean_sd, plt, pm, rows, summaries, table, variants

N = 62378344  # AlexNet's parameters, papers/bidmach.md §11
ROOF_FLOPS = 19.375e6  # §8: (1/16 flop/byte) x 2.48 Gbit/s / 8
LINK_BOTH_GBPS = 2.48
START_S = 2.0
NS = [1, 4, 16]


def config(d):
    return load(os.path.join(d, "config.resolved.json"))


def rank_rates(d):
    """Per rank: samples/s over its step rows from START_S on (see the module's docstring)."""
    batch = int(config(d)["algorithm"]["batch_size"])
    by_rank = {}
    for r in rows(d):
        if r["kind"] == "train" and float(r["time_s"]) >= START_S:
            by_rank.setdefault(int(r["rank"]), []).append((float(r["time_s"]), int(r["step"])))
    out = {}
    for rank, pts in sorted(by_rank.items()):
        (t0, k0), (t1, k1) = pts[0], pts[-1]
        out[rank] = batch * (k1 - k0) / (t1 - t0) if t1 > t0 else None
    return out


def throughput(d):
    return sum(x for x in rank_rates(d).values() if x)


def scaling_rows(root, prefix, base_prefix=None):
    """(n, samples/s, speedup, speedup / n, per node) of the variants PREFIXn<n>; the speedup over BASE_PREFIXn1
    (default: PREFIXn1)."""
    v = variants(root)
    one = f"{base_prefix if base_prefix is not None else prefix}n1"
    base = throughput(v[one]) if one in v else None
    body = []
    for n in NS:
        if f"{prefix}n{n}" in v:
            t = throughput(v[f"{prefix}n{n}"])
            sp = t / base if base else None
            body.append([n, t, sp, sp / n if sp else None, t / n])
    return body


HEAD = ["n", "samples/s", "speedup over n = 1", "% of ideal (speedup / n)", "per-node samples/s"]


def pct(body):
    return [[r[0], r[1], r[2], None if r[3] is None else round(100 * r[3], 1), r[4]] for r in body]


def scaling_figure(series, out, title):
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, body in series.items():
        ax.plot([r[0] for r in body], [r[1] for r in body], marker="o", label=label)
    ideal = next(iter(series.values()))
    ax.plot([r[0] for r in ideal], [ideal[0][1] * r[0] for r in ideal], ls=":", color="grey", label="ideal (BIDMach n=1 x n)")
    ax.set(xscale="log", yscale="log", xlabel="nodes", ylabel="samples/s (simulated)", title=title)
    ax.set_xticks(NS, [str(n) for n in NS])
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def b1(root, out):
    body = scaling_rows(root, "")
    print("B1 BIDMach grid (alpha 0.3, quorums 1.0, 3 slots), AlexNet batch 128 per node: predicted throughput\n")
    print(table(HEAD, pct(body)))
    scaling_figure({"BIDMach grid": body}, out, "B1: weak scaling (prediction)")


def b2(root, out):
    print("B2 MXNet-like parameter server, AlexNet batch 128 per node: predicted throughput\n")
    series = {}
    for mode in ("ps_sync", "ps_async"):
        series[mode] = scaling_rows(root, mode + "_")
        print(f"{mode} (servers co-located):\n\n" + table(HEAD, pct(series[mode])) + "\n")
    for mode in ("ps_sync", "ps_async"):
        rows = scaling_rows(root, "dedicated_" + mode + "_", mode + "_")
        if rows:
            series[mode + ", dedicated servers"] = rows
            print(f"{mode} (servers: dedicated, n more machines; speedup over the co-located n = 1):\n\n"
                  + table(HEAD, pct(rows)) + "\n")
    # papers/bidmach.md §11: the targets released with the calibration inputs (4 nodes), beside the predictions.
    at4 = {label: {r[0]: r[1] for r in rows}.get(4) for label, rows in series.items()}
    released = {"ps_sync": 246.44, "ps_async": 259.69}
    body = [[label, at4[label], released[label.split(",")[0]]] for label in at4 if label.split(",")[0] in released]
    print("At 4 nodes, against the released calibration targets (samples/s):\n")
    print(table(["MXNet", "predicted", "released target"], body) + "\n")
    b1_root = os.path.join(os.path.dirname(os.path.abspath(root)), "b1_weak_scaling")
    if os.path.isdir(b1_root):
        grid = {r[0]: r[1] for r in scaling_rows(b1_root, "")}
        modes = ("ps_sync", "ps_async")
        body = [[n, grid.get(n), *(grid[n] / t if n in grid and t else None
                                   for t in ({r[0]: r[1] for r in series[m]}.get(n) for m in modes))]
                for n in NS]
        print("BIDMach / MXNet throughput (B1's runs beside these):\n")
        print(table(["n", "BIDMach samples/s", "BIDMach / ps_sync", "BIDMach / ps_async"], body))
        series = {"BIDMach grid": scaling_rows(b1_root, ""), **series}
    scaling_figure(series, out, "B1/B2: BIDMach grid vs parameter server (prediction)")


def grid_counts(d):
    """(n, p, steps, counters) of a bidmach_grid run; counters are summed over nodes."""
    s = load(os.path.join(d, "summary.json"))
    n = s["workers"]
    p = round(n ** 0.5)
    return n, p, s["steps_per_worker"], s["counters"], s


def b3(root, out):
    print("B3 roofline of the grid allreduce during B1's training (prediction). Rounds and durations summed over "
          "nodes and both dimensions; a round's duration runs from its fetch to just before the elastic step. "
          "Achieved FLOPS = (N/p)(p-1) / mean duration; NIC-shared: x 2 (the row and column rounds share one NIC, "
          "§8); overlap-corrected: (N/p)(p-1) x rounds per node / (simulated time - 2 s start-up), every round "
          "in flight at once counted once. Bytes: sent + received per node / rounds per node\n")
    body = []
    for name, d in variants(root).items():
        n, p, _, c, s = grid_counts(d)
        if n < 4:
            continue
        rounds = c["rounds_row"] + c["rounds_column"]
        dur_s = (c["allreduce_us_row"] + c["allreduce_us_column"]) / 1e6
        mean = dur_s / rounds
        flops = N / p * (p - 1)
        fl = flops / mean
        per_node = rounds / n
        window = s["simulated_time_s"] - START_S
        corr = flops * per_node / window
        moved = sum(s["bytes_sent_per_rank"]) + sum(s["bytes_received_per_rank"])
        body.append([f"{p}x{p}", rounds, dur_s, mean, fl / 1e6, round(100 * fl / ROOF_FLOPS, 1),
                     2 * fl / 1e6, round(200 * fl / ROOF_FLOPS, 1), corr / 1e6, round(100 * corr / ROOF_FLOPS, 1),
                     moved / n / per_node / 1e6, 4 * (p - 1) * 4 * N / p / 1e6])
    body.sort(key=lambda r: r[0])
    print(table(["grid", "allreduces profiled", "summed duration s", "mean duration s", "achieved MFLOPS",
                 "% of 19.375", "NIC-shared MFLOPS", "% (NIC-shared)", "overlap-corrected MFLOPS",
                 "% (overlap-corrected)", "MB moved per allreduce per node", "§8 model MB"], body))


def b5(root, out):
    print("B5 effective elastic period during B1 (prediction): training steps per node / rounds per node that "
          "ended during training (counters rounds_in_training_*), per dimension and combined\n")
    body = []
    for name, d in variants(root).items():
        n, p, steps, c, _ = grid_counts(d)
        if n < 4:
            continue
        r, col = c["rounds_in_training_row"] / n, c["rounds_in_training_column"] / n
        body.append([f"{p}x{p}", steps, r, col, steps / r if r else None, steps / col if col else None,
                     steps / (r + col) if r + col else None, c["learner_lock_wait_us"] / 1e6 / n])
    body.sort(key=lambda r: r[0])
    print(table(["grid", "steps per node", "row rounds per node", "column rounds per node", "period, row",
                 "period, column", "period, combined", "learner lock wait s per node"], body))


def b4(root, out):
    print("B4 raw grid allreduce alone (train false), max_rounds rounds per dimension: bandwidth = bytes sent + "
          "received per node / run time (simulated: a prediction; mpi_: wall time of 4 ranks on ONE machine over "
          "loopback TCP (summary.json's wall_time_s), not the p2.xlarge network)\n")
    body, pts = [], {}
    for name, d in variants(root).items():
        s = load(os.path.join(d, "summary.json"))
        cfg = config(d)
        floats = (cfg["data"]["width"] + 1) * cfg["data"]["classes"]
        t = s.get("wall_time_s") or s["simulated_time_s"]
        gbps = (sum(s["bytes_sent_per_rank"]) + sum(s["bytes_received_per_rank"])) / s["workers"] * 8 / t / 1e9
        p = round(s["workers"] ** 0.5)
        reading = "bytes" if name.split("_")[-1][0] == "b" else "floats"
        backend = "mpi (loopback)" if name.startswith("mpi_") else "simulator"
        body.append([backend, f"{p}x{p}", name.split("_")[-1][1:], reading, floats, 4 * floats / 1e6,
                     cfg["algorithm"]["max_rounds"], t, gbps, gbps / LINK_BOTH_GBPS])
        if backend == "simulator":
            pts.setdefault(f"{p}x{p}", []).append((4 * floats, gbps))
    body.sort(key=lambda r: (r[0] != "simulator", r[1], r[3], r[4]))
    print(table(["backend", "grid", "payload", "read as", "floats", "MB", "rounds", "time s", "Gbit/s",
                 "fraction of 2.48"], body))
    fig, ax = plt.subplots(figsize=(6, 4))
    for g, xs in sorted(pts.items()):
        xs.sort()
        ax.plot([x for x, _ in xs], [y for _, y in xs], marker="o", label=g)
    ax.axhline(LINK_BOTH_GBPS, ls=":", color="grey", label="2.48 Gbit/s")
    ax.set(xscale="log", xlabel="payload bytes", ylabel="Gbit/s sent + received per node",
           title="B4: raw grid allreduce (simulated, prediction)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def over_dims(c, key):
    """A counter summed over the grid's dimensions (row, column, and dim2, dim3 of a 3- or 4-D grid)."""
    return sum(c.get(f"{key}_{dim}", 0) for dim in ("row", "column", "dim2", "dim3"))


def grid_row(name, d):
    n, p, steps, c, s = grid_counts(d)
    rates = rank_rates(d)
    dims = int(config(d)["algorithm"].get("dims", 2))
    per_node = over_dims(c, "rounds") / n
    in_training = over_dims(c, "rounds_in_training") / n
    last = {}
    for r in rows(d):
        if r["kind"] == "train":
            last[r["rank"]] = float(r["time_s"])
    train_s = sum(last.values()) / len(last) - START_S
    return [name, throughput(d), throughput(d) / n, min(x for x in rates.values() if x), per_node,
            in_training / dims / train_s, c["rounds_forced_row"], c["rounds_forced_column"],
            over_dims(c, "chunks_short_reduced"), over_dims(c, "chunks_missing"), c["learner_lock_wait_us"] / 1e6 / n,
            s["simulated_time_s"]]


GRID_HEAD = ["variant", "samples/s", "per-node samples/s", "slowest node samples/s", "rounds per node (all dims)",
             "line round rate /s during training", "forced rounds, row", "forced rounds, column", "chunks reduced short", "chunks from own copy",
             "learner lock wait s per node", "simulated s"]


def quality_curves(d):
    """Per evaluated step: the nodes' own models' test accuracies (replica rows; where there are none, rank 0's
    eval rows: ps_sync's one model), and the accuracy of their average (aggregate rows, or the same)."""
    own, avg, ev = {}, {}, {}
    for r in rows(d):
        if not r["test_accuracy"]:
            continue
        k, acc = int(r["step"]), float(r["test_accuracy"])
        if r["kind"] == "replica":
            own.setdefault(k, []).append(acc)
        elif r["kind"] == "aggregate":
            avg[k] = acc
        elif r["kind"] == "eval" and r["rank"] == "0":
            ev[k] = acc
    if not own:
        own = {k: [a] for k, a in ev.items()}
    return own, avg or ev


def b6(root, out):
    print("B6 model quality vs epoch, a convergence surrogate (prediction; softmax regression on Fashion-MNIST in "
          "AlexNet's time structure on p2.xlarge: see the experiment file). Nodes: each node's own model, mean ± "
          "standard deviation across nodes (ps_sync: the servers' one model); average: the nodes' mean model "
          "(BIDMach's final model); elastic period: training steps per elastic step, both dimensions (B5)\n")
    marks = (1, 5, 10, 20)
    body, curves = [], {}
    order = {"bidmach_grid": 0, "ps_sync": 1, "ps_async": 2}
    runs = sorted(variants(root).items(), key=lambda nd: (order.get(config(nd[1])["algorithm"]["name"], 3),
                                                          config(nd[1])["algorithm"]["workers"], nd[0]))
    for name, d in runs:
        cfg, s = config(d), load(os.path.join(d, "summary.json"))
        spe = int(cfg["run"]["steps_per_epoch"])
        own, avg = quality_curves(d)
        by_epoch = {k / spe: own[k] for k in sorted(own)}
        curves[name] = by_epoch
        at = [pm(*mean_sd(by_epoch[e]), 4) if e in by_epoch else None for e in marks]
        last = max(own)
        c, n = s.get("counters", {}), s["workers"]
        r = c.get("rounds_in_training_row", 0) + c.get("rounds_in_training_column", 0)
        period = s["steps_per_worker"] * n / r if r else None
        body.append([name, n, last / spe, *at, avg.get(last), s["test_accuracy"], period, s["simulated_time_s"]])
    print(table(["configuration", "nodes", "epochs", *(f"nodes, epoch {e}" for e in marks), "average, last",
                 "final model", "elastic period", "simulated s"], body))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, by_epoch in curves.items():
        es = sorted(by_epoch)
        ms = [mean_sd(by_epoch[e]) for e in es]
        line, = ax.plot(es, [m for m, _ in ms], label=name)
        ax.fill_between(es, [m - sd for m, sd in ms], [m + sd for m, sd in ms], color=line.get_color(), alpha=0.2)
    ax.set_ylim(0.5, None)  # epoch 0 (the initial model, about 0.1) is off the scale
    ax.set(xlabel="epoch", ylabel="test accuracy (nodes' own models)",
           title="B6 surrogate: softmax regression, Fashion-MNIST (prediction)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def b7(root, out):
    print("B7 16 nodes (4x4), rank 5 slowed 3x, quorums (reduce, complete, round) 1.0 vs 0.7 (prediction). "
          "Forced rounds and chunk counts summed over nodes; line round rate: rounds per line that "
          "completed during training / (the nodes' mean time of their last step - 2 s start-up); rounds per node: "
          "all of the run, the ones after the last step included\n")
    order = sorted(variants(root).items(), key=lambda nd: (nd[0] != "none_q1.0", "join" in nd[0], -float(nd[0].split("_q")[-1])))
    print(table(GRID_HEAD, [grid_row(n, d) for n, d in order]))
    moves = []
    for name, d in order:
        s = load(os.path.join(d, "summary.json"))
        c = s["counters"]
        if "grid_relayouts" in c:
            events = ", ".join(f"{e['event']} {e['rank']} at {e['at_s']:g} s" for e in s["scenario"]["events"])
            moves.append([name, events, c["grid_relayouts"], c["grid_imbalance_max"], c["rounds_forced_relayout_row"],
                          c["rounds_forced_relayout_column"]])
    if moves:
        print("\nMembership: re-layouts by the GridMaster, the largest difference between two rows' (or two columns') "
              "populations after any of them, rounds force-completed by a new version of their line (summed over "
              "nodes)\n")
        print(table(["variant", "events", "re-layouts", "max row/column imbalance", "forced by re-layout, row",
                     "forced by re-layout, column"], moves))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(order)
    for i, (name, d) in enumerate(order):
        rates = rank_rates(d)
        ax.bar([r + (i - (len(order) - 1) / 2) * width for r in rates], list(rates.values()), width=width, label=name)
    ax.set(xlabel="rank", ylabel="samples/s (simulated)", title="B7: per-node throughput, rank 5 slowed 3x (prediction)")
    ax.set_ylim(0, 1.3 * max(max(rank_rates(d).values()) for _, d in order))
    ax.legend(loc="upper center", ncol=len(order))
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def b8(root, out):
    print("B8 one line of all n nodes (dims 1) vs the 2-D grid (dims 2) vs 3- and 4-D grids (dims 3, 4: the nodes "
          "row-major in a grid of side ceil(n^(1/d)), §14's future work) (prediction). Mean round duration = summed "
          "round durations / rounds (all dimensions)\n")
    body = []
    for name, d in sorted(variants(root).items(), key=lambda nd: (grid_counts(nd[1])[0], nd[0])):
        _, _, _, c, _ = grid_counts(d)
        rounds = over_dims(c, "rounds")
        mean = over_dims(c, "allreduce_us") / 1e6 / rounds if rounds else None
        body.append(grid_row(name, d)[:6] + [mean])
    print(table(GRID_HEAD[:6] + ["mean round duration s"], body))


STUDIES = {"b1": b1, "b2": b2, "b3": b3, "b4": b4, "b5": b5, "b6": b6, "b7": b7, "b8": b8}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="an experiment (b1_weak_scaling or b1, ..., b3, b5)")
    ap.add_argument("root", help="the experiment's result directory (B1's for b3 and b5)")
    ap.add_argument("--out", default=None, help="the figure (default ROOT/NAME.png)")
    args = ap.parse_args()
    tag = args.name.split("_")[0]
    if tag not in STUDIES:
        raise SystemExit(f"bidmach: unknown experiment {args.name} (known: {', '.join(STUDIES)})")
    if not os.path.isdir(args.root):
        raise SystemExit(f"bidmach: no result directory {args.root}")
    STUDIES[tag](args.root, args.out or os.path.join(args.root, args.name + ".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
