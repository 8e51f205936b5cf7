#!/usr/bin/env python3
"""steptime.py RESULT_DIR [SKIP]: mean time per step of a dtsim result directory (simulator or MPI).

For every rank with step rows in metrics.csv: (time at its last step - time at its first step > SKIP) /
(steps between them); prints the mean over those ranks (the workers; a server has no step rows)."""
import csv, sys

def step_time(d, skip=2):
    rows = {}
    with open(f"{d}/metrics.csv") as f:
        for r in csv.DictReader(f):
            if not r.get("step") or not r.get("time_s"):
                continue
            rows.setdefault(r["rank"], {})[int(r["step"])] = float(r["time_s"])
    per = []
    for steps in rows.values():
        ks = sorted(k for k in steps if k > skip)
        if len(ks) >= 2:
            per.append((steps[ks[-1]] - steps[ks[0]]) / (ks[-1] - ks[0]))
    if not per:
        sys.exit(f"steptime.py: no step rows in {d}/metrics.csv")
    return sum(per) / len(per)

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    print(f"{step_time(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 2):.6g}")
