#!/usr/bin/env python3
"""hostcosts.py RATE MEASURED.json: writes the host-side-cost fit of one NIC rate from microbenchmark times.

MEASURED.json (scripts/validation/calibrate) maps case names to {"mode", "bytes", "ranks", "messages", "steps",
"times": [s per step of each repeat], "load": [1-min load average before each]}. Writes
  platforms/measured_netns_RATE_hostbase.json  the ping-pong platform (measured_netns_RATE.json) with `sharing`
      chosen from the 4 MiB exchange / one-way ratio (> 1.5: Open MPI's one TCP connection per pair carries both
      directions, `per_connection`; else `split_duplex`), `machine_cores`, and zero `message_overhead` and
      `network_stack` figures for the fit to fill;
  experiments/validation/hostcosts_RATE.cal.json  the calibration file for `dtsim calibrate`: every case is a
      target but the compute alone with one rank per core (`ov_0`, whose time is the simulated F/B,
      model.step_time_s, of every overlap case): value = the median of its repeats, the same microbench
      experiment on the simulator, figure /simulated_time_s divide_by /steps_per_worker. The platform has
      `machine_cores` = this machine's cores: the simulated ranks' compute and message costs share them as the
      MPI ranks do, so the 4-rank cases (4 ranks on 2 cores) are fitted too. Fitted (weight 1: the cases above
      the tbf bucket, 64 KiB, since a message that fits leaves unshaped, a burst the simulator's links do not
      have; and the update case): the link bandwidth, the per-message CPU cost of sender and receiver (LogGP's
      o_s, o_r: a, one segment each, no per-byte term), the network stack's CPU cost per byte on each end, spent
      alongside the flow (network_stack: the kernel's packet processing, which /proc/stat shows as softirq
      time), and the device's memory bandwidth (the elastic-update case `upd`: the rate of every update pass and
      update rule, the only roofline terms left when model.step_time_s times the F/B). Weight 0: the 64 KiB
      ping-pong and the 4-rank compute alone (`ov4_0`, a check of the time-slicing with no free parameter)."""
import json, os, statistics, sys

TBF_BURST = 65536  # netns_cluster's tbf bucket (burst 64kb): a message this small leaves at the veth's own speed

if len(sys.argv) != 3:
    sys.exit(__doc__)
rate, measured = sys.argv[1:]
m = json.load(open(measured))
med = {k: statistics.median(v["times"]) for k, v in m.items()}
base = json.load(open(f"platforms/measured_netns_{rate}.json"))
B = base["link_bandwidth_bps"]
MEM_BW = base["device"]["mem_bw_Bps"]  # one core's STREAM triad; the forward-backward is model.step_time_s

one_way = med["pp_4m"] / (2 * m["pp_4m"]["messages"])
ratio = med["ex_4m"] / m["ex_4m"]["messages"] / one_way
sharing = "per_connection" if ratio > 1.5 else "split_duplex"
hostbase = {
    "base": f"measured_netns_{rate}.json",
    "name": f"measured_netns_{rate}_hostbase",
    "sharing": sharing,
    "message_overhead": {"send": [[0, 0.0, 0.0]], "recv": [[0, 0.0, 0.0]]},
    "network_stack": {"send_s_per_byte": 0.0, "recv_s_per_byte": 0.0},
    "machine_cores": len(os.sched_getaffinity(0)),  # every namespace's rank runs on this machine's cores
}
cores = hostbase["machine_cores"]
with open(f"platforms/measured_netns_{rate}_hostbase.json", "w") as f:
    json.dump(hostbase, f, indent=2)
    f.write("\n")

compute = {v["ranks"]: med[k] for k, v in m.items() if k.startswith("ov") and v["bytes"] == 4}
one_per_core = compute[min(compute, key=lambda r: abs(r - cores))]  # the compute with each core busy
targets = []
for k, v in m.items():
    alone = v["mode"] == "overlap" and v["bytes"] == 4
    if alone and v["ranks"] <= cores:
        continue  # it is the input
    sets = {"model.numerics": "modeled", "data.modeled": True, "data.dir": None, "algorithm.mode": v["mode"],
            "algorithm.bytes": v["bytes"], "algorithm.workers": v["ranks"], "algorithm.messages": v["messages"],
            "run.steps": v["steps"]}
    if v["mode"] == "overlap":
        sets["model.step_time_s"] = one_per_core
    loads = ", ".join(f"{x:.2f}" for x in v["load"])
    times = ", ".join(f"{x:.5g}" for x in v["times"])
    targets.append({"name": k, "experiment": "microbench.json", "figure": "/simulated_time_s",
                    "divide_by": "/steps_per_worker", "value": float(f"{med[k]:.5g}"), "set": sets,
                    "weight": 1 if v["bytes"] > TBF_BURST or v["mode"] == "update" else 0,
                    "source": f"MPI microbench across namespaces at {rate}, median of [{times}] s/step, "
                              f"load [{loads}]"})
cal = {
    "name": f"hostcosts_{rate}",
    "description": f"host-side costs at {rate} from microbenchmarks only (scripts/validation/calibrate); "
                   f"exchange/one-way ratio at 4 MiB {ratio:.2f} -> sharing {sharing}; machine_cores {cores}; "
                   f"compute alone " + ", ".join(f"{r} ranks {t*1e3:.2f} ms" for r, t in sorted(compute.items()))
                   + f"; model.step_time_s {one_per_core*1e3:.2f} ms (one rank per core)",
    "platform": f"../../platforms/measured_netns_{rate}_hostbase.json",
    "output": f"../../platforms/measured_netns_{rate}_calibrated.json",
    "parameters": [
        {"key": "/link_bandwidth_bps", "min": 0.5 * B, "max": 1.5 * B, "start": B},
        {"key": "/message_overhead/send/0/1", "min": 1e-7, "max": 1e-3, "start": 1e-5},
        {"key": "/message_overhead/recv/0/1", "min": 1e-7, "max": 1e-3, "start": 1e-5},
        {"key": "/network_stack/send_s_per_byte", "min": 1e-12, "max": 1e-7, "start": 1e-9},
        {"key": "/network_stack/recv_s_per_byte", "min": 1e-12, "max": 1e-7, "start": 1e-9},
        {"key": "/device/mem_bw_Bps", "min": 0.2 * MEM_BW, "max": 10 * MEM_BW, "start": MEM_BW},
    ],
    "targets": targets,
    "fit": {"max_evaluations": 150, "tolerance": 1e-3},
}
with open(f"experiments/validation/hostcosts_{rate}.cal.json", "w") as f:
    json.dump(cal, f, indent=2)
    f.write("\n")
print(f"  {rate}: exchange/one-way {ratio:.2f} -> sharing {sharing}; {len(targets)} targets -> "
      f"experiments/validation/hostcosts_{rate}.cal.json")
