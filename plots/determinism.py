"""The determinism study's table and figure (H10 of plots/easgd_hpc.py, 5b of plots/scenarios.py).

Each method has a reference run (variant METHOD_ref) and perturbed runs of the same seed (METHOD_PERTURBATION);
the question is whether each perturbed run ends on the reference's final model (summary.json final_model_hash).
"""
import matplotlib.pyplot as plt

import easgd_hpc_read as R


def determinism(root, perturbations, heading, title):
    """Prints the table under `heading` and returns the same/differs matrix as a figure titled `title`.
    `perturbations`: variant suffix -> what it changes, in the order of the columns."""
    v = R.variants(root)
    algs = sorted({n[: -len("_ref")] for n in v if n.endswith("_ref")})
    perts = [p for p in perturbations if any(n.endswith("_" + p) for n in v)]
    body, matrix = [], []
    for a in algs:
        ref = R.summary(v[f"{a}_ref"])
        same = [R.summary(v[f"{a}_{p}"])["final_model_hash"] == ref["final_model_hash"] for p in perts]
        accs = [R.summary(v[f"{a}_{p}"])["test_accuracy"] for p in ["ref"] + perts]
        body.append([a] + ["same" if x else "DIFFERENT" for x in same] + [min(accs), max(accs)])
        matrix.append([1 if x else 0 for x in same])
    print(heading + "\n")
    print(R.table(["method"] + [perturbations[p] for p in perts] + ["min accuracy", "max accuracy"], body))
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.imshow(matrix, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(perts)), [perturbations[p] for p in perts], fontsize=8)
    ax.set_yticks(range(len(algs)), algs)
    for i, r in enumerate(matrix):
        for j, x in enumerate(r):
            ax.text(j, i, "same" if x else "differs", ha="center", va="center")
    ax.set_title(title)
    return fig
