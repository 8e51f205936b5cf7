#!/usr/bin/python3
"""Tables and figures of the MPCA SGD experiments (experiments/mpca/, papers/mpca_sgd.md §15).

  plots/mpca.py NAME RESULT_DIR [--out FIGURE]

NAME is an experiment (m1_calibration, m5_system_metrics, m6_exchange_patterns, m7_scale_out, m8_extrapolation,
m9_weighting, m10_mxnet_load, m11_easgd_tau, m12_faults, m13_variation, or its M number); RESULT_DIR is what `dtsim run`
wrote (one subdirectory per variant; M13: one seedN directory per seed, each with one per variant). Prints the Markdown table(s) and writes a figure (default RESULT_DIR/NAME.png). Reads result files only; every number is a
prediction of the simulator.

Definitions. Workers: the ranks that computed (forward_backward > 0). The steady state: summary.json's window
(run.measure_from_step k: the last worker's clock over steps (k, N], each worker's bytes in it), or, for a run
without one, the whole run. s / iteration: the window's s_per_step. GPU utilisation: a worker's forward_backward
seconds per step (over its whole run) x the window's steps / the window's time, averaged over the workers (without a
window: forward_backward / elapsed seconds). NIC utilisation: bytes sent (out) or received (in) x 8 / (time x
LINK_BPS), of the busiest worker (MXNet; its bytes in the window) or of the driver (rank 0): EASGD's workers talk
to the driver alone, so its bytes in the window are the workers' (what they sent, it received); Sync's and MPCA's
workers also pass chunks and partial sums among themselves, so their driver's rate is its whole run's (bytes /
simulated time: Sync's runs are whole rounds; MPCA's driver runs the same cycles before and after the workers end).
MPCA: cycle = the driver's mean cycle past the pipeline's fill while the workers train (counters
mpca_training_cycle_us / mpca_training_cycles; without them simulated time / cycles); shard period = S x cycle;
iterations per shard cycle = shard period / s per iteration, the steps between two reductions of a shard;
preparation = mpca_prepare_us / mpca_preparations. EASGD's wait per exchange: a worker's window time less its
compute and updates in it (its whole run's per step), per exchange in the window (window steps / tau).
"""
import argparse
import os
import sys

from gossipgrad import fmt, load, plt, rows, summaries, table, variants

LINK_BPS = 0.95e9  # platforms/titanx_1gbe.json
TABLE1 = {7: 1.1, 83: 9.2, 223: 23.6, 491: 51.1}  # §8.1 full exchange (s)
SYSTEMS = ["single", "sync", "easgd", "mxnet", "mpca"]
LABEL = {"single": "single GPU", "sync": "Sync (sparknet_avg)", "easgd": "EASGD (easgd_driver)",
         "mxnet": "MXNet (ps_sharded)", "mpca": "MPCA"}
MODEL = {"r110": "ResNet-110", "r152": "ResNet-152", "vgga": "VGG-A"}


def config(d):
    return load(os.path.join(d, "config.resolved.json"))


def workers(s):
    return [r for r in s["time_breakdown"]["ranks"] if r["seconds"]["forward_backward"] > 0]


def window(s):
    """(time, steps) of the steady-state window, or None for a run without one."""
    w = s.get("window")
    if w and w.get("s_per_step"):
        return w["time_s"], w["to_step"] - w["from_step"]
    return None


def per_step(s):
    """Seconds per iteration in the steady state (the window's), else over the whole run."""
    w = s.get("window")
    return w["s_per_step"] if w and w.get("s_per_step") else s["simulated_time_s"] / s["steps_per_worker"]


def gpu_util(s):
    ws, win = workers(s), window(s)
    if not win:
        return sum(r["seconds"]["forward_backward"] / r["elapsed_s"] for r in ws) / len(ws)
    t, steps = win
    return sum(r["seconds"]["forward_backward"] / s["steps_per_worker"] * steps / t for r in ws) / len(ws)


def nic(s, rank=None, alg=None):
    """(out, in) utilisation of `rank` (the driver, 0), or of the busiest worker (module docstring)."""
    win = window(s)
    if win and (rank is None or alg == "easgd_driver"):
        sent = {int(r): b for r, b in s["window"]["bytes_sent_by_rank"].items()}
        recv = {int(r): b for r, b in s["window"]["bytes_received_by_rank"].items()}
        t = win[0] * LINK_BPS / 8
        if rank is None:
            busiest = max(sent, key=lambda r: sent[r] + recv[r])
            return sent[busiest] / t, recv[busiest] / t
        return sum(recv.values()) / t, sum(sent.values()) / t  # the workers' partner is the driver alone
    t = s["simulated_time_s"] * LINK_BPS / 8
    out, inn = s["bytes_sent_per_rank"], s["bytes_received_per_rank"]
    if rank is None:
        rank = max(range(len(out)), key=lambda r: out[r] + inn[r])
    return out[rank] / t, inn[rank] / t


def cycle(s):
    """MPCA's driver cycle in the steady state (s), and the mean preparation (s), or None where not counted."""
    c = s.get("counters", {})
    if c.get("mpca_training_cycles"):
        ct = c["mpca_training_cycle_us"] * 1e-6 / c["mpca_training_cycles"]
    elif c.get("mpca_cycles"):
        ct = s["simulated_time_s"] / c["mpca_cycles"]
    else:
        return None, None
    prep = c["mpca_prepare_us"] * 1e-6 / c["mpca_preparations"] if c.get("mpca_preparations") else None
    return ct, prep


def has_driver(alg):
    return alg in ("mpca", "sparknet_avg", "easgd_driver")


def m1(root, out):
    body, xs, ys = [], [], []
    for name, s in sorted(summaries(root).items(), key=lambda kv: int(kv[0][3:])):
        mib = int(name[3:])
        sim = s["simulated_time_s"] / s["steps_per_worker"]  # one round per step (comm_period_steps 1)
        body.append([mib, TABLE1[mib], round(sim, 2), f"{100 * (sim - TABLE1[mib]) / TABLE1[mib]:+.1f} %"])
        xs.append(mib)
        ys.append(sim)
    a = config(os.path.join(root, "mib7"))["algorithm"]
    print(f"M1: full broadcast + treeReduce, 8 executors, job_launch_s {a['job_launch_s']}, "
          f"collective_s_per_mib {a['collective_s_per_mib']}, broadcast_compress_Bps "
          f"{a.get('broadcast_compress_Bps', 0):g}\n")
    print(table(["size (MiB)", "table (s)", "simulated (s)", "error"], body))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(xs, [TABLE1[m] for m in xs], "o", label="§8.1 table")
    ax.plot(xs, ys, "x-", label="simulated (fitted)")
    ax.set_xlabel("model size (MiB)")
    ax.set_ylabel("full exchange (s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def m5(root, out):
    ss = summaries(root)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for mi, m in enumerate(MODEL):
        body = []
        single = ss.get(f"{m}_single")
        for sy in SYSTEMS:
            s = ss.get(f"{m}_{sy}")
            if not s:
                continue
            c = config(os.path.join(root, f"{m}_{sy}"))["algorithm"]
            k, b = c["workers"], c["batch_size"]
            thr = k * b / per_step(s)
            base = b / per_step(single) if single else None
            o, i = nic(s, 0 if has_driver(c["name"]) else None, c["name"])
            ct, _ = cycle(s)
            ipc = c["shards"] * ct / per_step(s) if ct else None
            u = gpu_util(s)
            body.append([LABEL[sy], k, s.get("window") and f"({s['window']['from_step']}, {s['window']['to_step']}]",
                         round(per_step(s), 4), round(thr, 1), round(thr / base, 2) if base else None,
                         f"{100 * u:.0f} %", f"{100 * o:.0f} %", f"{100 * i:.0f} %" if k > 1 else "-",
                         round(ipc, 1) if ipc else None])
            ax.bar(mi * 6 + SYSTEMS.index(sy), u, color=f"C{SYSTEMS.index(sy)}", label=LABEL[sy] if mi == 0 else None)
        print(f"\n{MODEL[m]}\n")
        print(table(["system", "K", "steps measured", "s / iteration", "images / s", "throughput vs 1 GPU",
                     "GPU util.", "NIC out", "NIC in", "iterations / shard cycle"], body))
    ax.set_xticks([2, 8, 14], list(MODEL.values()))
    ax.set_ylabel("worker GPU utilisation")
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out)


def m6(root, out):
    ss = summaries(root)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for m in ["r110", "r152"]:
        body, xs, ys, labels = [], [], [], []
        for name, s in ss.items():
            if not name.startswith(m):
                continue
            c = config(os.path.join(root, name))["algorithm"]
            S, cyc = c["shards"], s["counters"]["mpca_cycles"]
            ct, prep = cycle(s)
            o, i = nic(s, 0)
            body.append([c["phases"], S, cyc, round(ct, 3), round(prep, 3) if prep is not None else None,
                         round(S * ct, 3), round(S * ct / per_step(s), 1), round(per_step(s), 4),
                         f"{100 * gpu_util(s):.0f} %", f"{100 * o:.0f} %", f"{100 * i:.0f} %"])
            xs.append(len(xs))
            ys.append(S * ct)
            labels.append(f"{c['phases']}-phase S={S}")
        print(f"\n{MODEL[m]}\n")
        print(table(["phases", "S", "cycles", "cycle (s)", "preparation (s)", "shard period (s)",
                     "iterations / shard cycle", "s / iteration", "GPU util.", "driver NIC out", "driver NIC in"], body))
        ax.plot(xs, ys, "o-", label=MODEL[m])
        ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel("shard period (s)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def m10(root, out):
    body, ks, ex = [], [], []
    for name, s in sorted(summaries(root).items(), key=lambda kv: int(kv[0][1:])):
        c = config(os.path.join(root, name))
        k, b, comp = c["algorithm"]["workers"], c["algorithm"]["batch_size"], c["model"]["step_time_s"]
        it = s["simulated_time_s"] / s["steps_per_worker"]
        o, i = nic(s)
        share = (k - 1) / k  # the co-located server's share never leaves the host (even shares assumed)
        body.append([k, round(it, 4), comp, round(it - comp, 4), round(b / it, 1), round(k * b / it, 1),
                     f"{100 * o * share:.0f} %" if k > 1 else "-", f"{100 * i * share:.0f} %" if k > 1 else "-"])
        ks.append(k)
        ex.append(it - comp)
    print(table(["K", "s / iteration", "compute (s)", "exchange (s)", "images / s per worker", "images / s",
                 "busiest NIC out", "busiest NIC in"], body))
    print("\nNIC: the busiest rank's bytes x (K - 1) / K (its own server's share stays on the host) / (time x link rate)")
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(ks, ex, "o-", label="exchange per iteration")
    ax.axhline(body[0][2], color="gray", ls="--", label="compute per iteration")
    ax.set_xlabel("workers K")
    ax.set_ylabel("s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def jitter_sigma(d):
    """The lognormal jitter's sigma on the workers in a result directory's resolved config (0: none)."""
    sc = config(d).get("scenario") or {}
    return next((j.get("sigma", 0) for j in sc.get("jitter", []) if j.get("model") == "lognormal"), 0)


def m11(root, out):
    body, curves = [], {}
    runs = []
    for name, d in variants(root).items():
        c = config(d)["algorithm"]
        runs.append((c["comm_period_steps"], jitter_sigma(d), name, load(os.path.join(d, "summary.json"))))
    base = max((sg for _, sg, n, _ in runs if n.startswith("tau") and "_" not in n), default=0)
    for tau, sigma, name, s in sorted(runs, key=lambda r: (r[1] != base, r[1], r[0])):
        ws, (t, steps) = workers(s), window(s) or (s["simulated_time_s"], s["steps_per_worker"])
        busy = sum((r["seconds"]["forward_backward"] + r["seconds"]["gpu_update"]) / s["steps_per_worker"] for r in ws)
        wait = (t - busy / len(ws) * steps) / (steps / tau)
        o, i = nic(s, 0, "easgd_driver")
        u = gpu_util(s)
        body.append([tau, sigma, round(per_step(s), 4), f"{100 * u:.0f} %", round(wait, 3), f"{100 * o:.0f} %",
                     f"{100 * i:.0f} %"])
        curves.setdefault(sigma, []).append((tau, u))
    print(table(["tau", "jitter sigma", "s / iteration", "GPU util.", "worker wait per exchange (s)",
                 "server NIC out", "server NIC in"], body))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for sigma, pts in sorted(curves.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"jitter sigma {sigma:g}")
    ax.legend(fontsize=7)
    ax.set_xlabel("tau")
    ax.set_ylabel("worker GPU utilisation")
    fig.tight_layout()
    fig.savefig(out)


THRESHOLDS = [0.30, 0.25, 0.20]  # test error on Fashion-MNIST (the stand-in for ResNet-110's 50 / 30 / 10 %)


def curve(d):
    """(simulated time, test error) of the evaluated model, in time order."""
    pts = sorted((float(r["time_s"]), 1 - float(r["test_accuracy"])) for r in rows(d)
                 if r["kind"] == "eval" and r["test_accuracy"])
    return pts


def time_to(pts, err):
    return next((t for t, e in pts if e <= err), None)


def convergence(root, out, title):
    vs = variants(root)
    curves = {n: curve(d) for n, d in vs.items()}
    single = curves.get("single")
    head = ["run", "final test error", "simulated time (s)"]
    for e in THRESHOLDS:
        head += [f"time to {100 * e:.0f} % (s)"] + (["speedup vs 1 GPU"] if single else [])
    body = []
    for n, pts in curves.items():
        s = load(os.path.join(vs[n], "summary.json"))
        row = [n, round(1 - s["test_accuracy"], 4) if s.get("test_accuracy") is not None else None,
               round(s["simulated_time_s"], 1)]
        for e in THRESHOLDS:
            t = time_to(pts, e)
            row.append(round(t, 1) if t is not None else "not reached")
            if single:
                t1 = time_to(single, e)
                row.append(round(t1 / t, 2) if t and t1 else None)
        body.append(row)
    print(table(head, body))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for n, pts in curves.items():
        ax.plot([t for t, _ in pts], [e for _, e in pts], ".-", label=n)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("test error")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(0.05, 0.5)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)


def m7(root, out):
    convergence(root, out, "M7: MPCA scale-out, lenet / Fashion-MNIST")


def m8(root, out):
    convergence(root, out, "M8: extrapolation, K = 8, lenet / Fashion-MNIST")


def m9(root, out):
    convergence(root, out, "M9: weighted reduction, 3 of 8 workers at half speed")


def m13(root, out):
    """Per system: time to each threshold over the seeds' runs (root/seedN/VARIANT), mean and worst."""
    seeds = sorted(d for d in os.listdir(root) if d.startswith("seed") and os.path.isdir(os.path.join(root, d)))
    if not seeds:
        raise SystemExit(f"mpca.py: no seedN directories in {root}")
    runs = {}  # system -> [(curve, summary)] over the seeds
    for sd in seeds:
        for n, d in variants(os.path.join(root, sd)).items():
            runs.setdefault(n, []).append((curve(d), load(os.path.join(d, "summary.json"))))
    runs = dict(sorted(runs.items(), key=lambda kv: SYSTEMS.index(kv[0]) if kv[0] in SYSTEMS else len(SYSTEMS)))
    print(f"M13 run-to-run variation over {len(seeds)} seeds ({', '.join(seeds)}); lenet / Fashion-MNIST stand-in, "
          "K = 8 (prediction). Time to each test error: mean over the seeds (best - worst), worst / mean, and the "
          "speedup of the mean over the single GPU's mean (M2's measures)\n")
    head = ["system", "final test error (mean ± sd)"]
    for e in THRESHOLDS:
        head += [f"to {100 * e:.0f} %: mean (best - worst) s", "worst / mean", "speedup vs 1 GPU"]
    means = {}
    for n, rs in runs.items():
        for e in THRESHOLDS:
            ts = [time_to(pts, e) for pts, _ in rs]
            if all(t is not None for t in ts):
                means[(n, e)] = sum(ts) / len(ts)
    body = []
    for n, rs in runs.items():
        errs = [1 - s["test_accuracy"] for _, s in rs]
        mean = sum(errs) / len(errs)
        sd = (sum((x - mean) ** 2 for x in errs) / max(1, len(errs) - 1)) ** 0.5
        row = [LABEL.get(n, n), f"{mean:.4f} ± {sd:.4f}"]
        for e in THRESHOLDS:
            ts = [time_to(pts, e) for pts, _ in rs]
            if (n, e) not in means:
                row += [f"not reached in {sum(t is None for t in ts)} of {len(ts)}", None, None]
                continue
            avg, one = means[(n, e)], means.get(("single", e))
            row += [f"{avg:.1f} ({min(ts):.1f} - {max(ts):.1f})", round(max(ts) / avg, 2),
                    round(one / avg, 2) if one else None]
        body.append(row)
    print(table(head, body))
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (n, rs) in enumerate(runs.items()):
        for k, (pts, _) in enumerate(rs):
            ax.plot([t for t, _ in pts], [e for _, e in pts], ".-", color=colors[i % len(colors)], alpha=0.7,
                    label=LABEL.get(n, n) if k == 0 else None)
    ax.set(xlabel="simulated time (s)", ylabel="test error", ylim=(0.05, 0.5),
           title=f"M13: run-to-run variation, {len(seeds)} seeds (prediction)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)


def m12(root, out):
    print("M12 fault injection in MPCA, ResNet-110, K = 8 (prediction). Events from summary.json's algorithm_events: "
          "the worker lost and when; the driver's crash, how long it was down (crash to the workers restored), the "
          "cycles and time lost (from the backup it restarted from to the workers restored)\n")
    body, timelines = [], {}
    for name, d in variants(root).items():
        s = load(os.path.join(d, "summary.json"))
        c, ev = s.get("counters", {}), s.get("algorithm_events", [])
        lost = [e for e in ev if e["event"] == "worker_lost"]
        restart = next((e for e in ev if e["event"] == "driver_restart"), None)
        body.append([name, s["simulated_time_s"], c.get("mpca_cycles"), c.get("mpca_targets_set"),
                     c.get("mpca_checkpoints"),
                     ", ".join(f"{int(e['worker'])} at {e['at_s']:.2f} s" for e in lost) or None,
                     c.get("mpca_reductions_lost", 0),
                     None if restart is None else restart["crash_s"], None if restart is None else restart["down_s"],
                     None if restart is None else int(restart["backup_cycle"]),
                     None if restart is None else int(restart["cycles_lost"]),
                     None if restart is None else restart["time_lost_s"]])
        timelines[name] = [(e["at_s"], e["event"]) for e in ev]
    print(table(["variant", "simulated s", "driver cycles", "targets set (worker x shard)", "backups",
                 "worker lost", "reductions lost", "driver crash s", "down s", "restarted from cycle",
                 "cycles lost", "time lost s"], body))
    fig, ax = plt.subplots(figsize=(8.5, 2.8))
    marks = {"checkpoint": ("|", "grey"), "worker_lost": ("x", "red"), "reduction_lost": ("v", "orange"),
             "driver_restart": ("*", "blue")}
    for y, (name, evs) in enumerate(sorted(timelines.items())):
        for kind, (m, color) in marks.items():
            xs = [t for t, k in evs if k == kind]
            if xs:
                ax.scatter(xs, [y] * len(xs), marker=m, color=color, label=kind if y == 0 or kind != "checkpoint" else None)
    ax.set_yticks(range(len(timelines)), sorted(timelines))
    ax.set(xlabel="simulated s", title="M12: MPCA's events under faults (prediction)")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(out, dpi=110)


PLOTS = {"m1_calibration": m1, "m5_system_metrics": m5, "m6_exchange_patterns": m6, "m7_scale_out": m7,
         "m8_extrapolation": m8, "m9_weighting": m9, "m10_mxnet_load": m10,
         "m11_easgd_tau": m11, "m12_faults": m12, "m13_variation": m13}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("root")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    names = [n for n in PLOTS if n == args.name or n.split("_")[0] == args.name]
    if len(names) != 1:
        raise SystemExit(f"mpca.py: unknown experiment '{args.name}' (known: {', '.join(PLOTS)})")
    PLOTS[names[0]](args.root, args.out or os.path.join(args.root, names[0] + ".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
