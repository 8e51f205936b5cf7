"""Reading dtsim result directories for plots/easgd_hpc.py (papers/easgd_hpc.md, experiments/easgd_hpc/).

Every figure and table is computed from the files a run wrote (summary.json, metrics.csv,
config.resolved.json); nothing here runs the simulator or holds a result.
"""
import csv
import json
import math
import os


def variants(root):
    """Variant name -> result directory, in the order of the run's config files (sorted names)."""
    out = {}
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isfile(os.path.join(d, "summary.json")):
            out[name] = d
    if not out:
        raise SystemExit(f"easgd_hpc: no result directories with summary.json under {root}")
    return out


def sweep_points(root, name_of):
    """A sweep's result directory (dtsim sweep): name_of(row of table.json) -> the point's directory."""
    path = os.path.join(root, "table.json")
    if not os.path.isfile(path):
        raise SystemExit(f"easgd_hpc: no table.json under {root} (a finished `dtsim sweep` writes it)")
    with open(path) as f:
        return {name_of(r): os.path.join(root, r["point"], r["variant"]) for r in json.load(f)}


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def config(d):
    with open(os.path.join(d, "config.resolved.json")) as f:
        return json.load(f)


def rows(d):
    with open(os.path.join(d, "metrics.csv"), newline="") as f:
        return list(csv.DictReader(f))


def accuracy_curve(d):
    """(simulated time, test accuracy) of every evaluation, in time order."""
    pts = [(float(r["time_s"]), float(r["test_accuracy"])) for r in rows(d) if r["test_accuracy"]]
    return sorted(pts)


def test_loss_curve(d):
    pts = [(float(r["time_s"]), float(r["test_loss"])) for r in rows(d) if r["test_loss"]]
    return sorted(pts)


def train_loss_curve(d):
    """Mean over the workers of the logged minibatch loss at each logged step: (mean time, mean loss)."""
    by_step = {}
    for r in rows(d):
        if r["loss"] and r["loss"].lower() != "nan":
            by_step.setdefault(int(r["step"]), []).append((float(r["time_s"]), float(r["loss"])))
    out = []
    for step in sorted(by_step):
        pts = by_step[step]
        out.append((sum(t for t, _ in pts) / len(pts), sum(v for _, v in pts) / len(pts)))
    return out


def first_time_at_or_above(curve, target):
    for t, v in curve:
        if v >= target:
            return t
    return None


def first_time_at_or_below(curve, target):
    for t, v in curve:
        if v <= target:
            return t
    return None


def value_at(curve, t):
    """The last value logged at or before time t (None before the first point)."""
    last = None
    for x, v in curve:
        if x > t:
            break
        last = v
    return last


def steps(d):
    return summary(d)["steps_per_worker"]


def time_s(d):
    return summary(d)["simulated_time_s"]


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 10 ** (-digits)):
            return f"{x:.{digits}e}"
        return f"{x:.{digits}f}"
    return str(x)


def table(header, body):
    """A Markdown table as a string (what the run script prints and the README quotes)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in body:
        lines.append("| " + " | ".join(fmt(c) for c in r) + " |")
    return "\n".join(lines)


def log2(x):
    return math.log2(x)
