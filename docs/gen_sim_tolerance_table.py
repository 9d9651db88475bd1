#!/usr/bin/env python3
"""Generates the batch-tolerance table of docs/sim.md with `railsim sim` (never hand-typed).

Usage: python3 docs/gen_sim_tolerance_table.py [path/to/railsim] [--timing] > /tmp/table.md
Each case runs exact (--exact) and at --batch-tolerance 1e-6, 1e-5, 1e-4 and 1e-3; a cell is the
worst relative error of the completion time and of every phase's (or, with --schedule, every
op's) time against the exact run, then the events the simulation processed (its cost: each is a
re-fill). The last row is the worst of each column: the default is the largest tolerance whose
worst error stays below 1e-4. --timing adds a second table, the wall-clock speed-up over exact
of each run (one run each: it varies with the machine and its load, so it is not checked).
"""
import json
import subprocess
import sys
import time

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
RAILSIM = ARGS[0] if ARGS else "./build/railsim"
TIMING = "--timing" in sys.argv[1:]
TOLERANCES = ["1e-6", "1e-5", "1e-4", "1e-3"]

# (what, design and routing, GPUs, arguments)
CASES = [
    ("all-to-all 1 GB", "rail_optimized, ECMP", 1024,
     ["--collective", "alltoall", "--aggregate", "off"]),
    ("all-to-all 1 GB", "rail_optimized 3:1, adaptive", 1024,
     ["--collective", "alltoall", "--aggregate", "off", "--routing", "adaptive",
      "--oversubscription", "3"]),
    ("all-to-all 1 GB", "rail_only, ECMP", 512,
     ["--design", "rail_only", "--collective", "alltoall", "--aggregate", "off"]),
    ("ring all-reduce 1 GB, every rail", "rail_optimized, ECMP", 2048,
     ["--collective", "allreduce", "--group", "rail"]),
    ("ring all-reduce 1 GB, every rail", "rail_only, ECMP", 1024,
     ["--design", "rail_only", "--collective", "allreduce", "--group", "rail"]),
    ("hierarchical all-reduce 1 GB", "rail_only, ECMP", 2048,
     ["--design", "rail_only", "--collective", "allreduce", "--algorithm", "hierarchical"]),
    ("MoE all-to-all, Zipf 1.2, experts = GPUs", "rail_optimized, ECMP", 256,
     ["--collective", "alltoall", "--skew", "zipf:1.2", "--experts", "256"]),
    ("MoE all-to-all, Zipf 1.2, experts = GPUs", "rail_only, adaptive", 64,
     ["--design", "rail_only", "--routing", "adaptive", "--collective", "alltoall", "--skew",
      "zipf:1.2", "--experts", "64"]),
    ("--schedule, Llama-3-8B (best plan)", "rail_optimized, ECMP", 256,
     ["--schedule", "--model", "Llama-3-8B"]),
    ("--schedule, Mixtral-8x7B (best plan)", "rail_only, ECMP", 256,
     ["--schedule", "--model", "Mixtral-8x7B", "--design", "rail_only"]),
]


def run(gpus, args, tolerance):
    extra = ["--exact"] if tolerance is None else ["--batch-tolerance", tolerance]
    cmd = [RAILSIM, "sim", "--gpus", str(gpus), *args, *extra, "--json"]
    start = time.monotonic()
    j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    seconds = time.monotonic() - start
    if "ops" in j:  # --schedule: each op's simulated time; events are not reported
        times = [j["completion_time_s"]] + [o["sim_time_s"] for o in j["ops"]]
        events = None
    else:
        times = [j["completion_time_s"]] + [p["time_s"] for p in j["phases"]]
        events = sum(p["events"] for p in j["phases"])
    return times, events, seconds


def error(times, exact):
    return max(abs(t - e) / e for t, e in zip(times, exact) if e > 0)


def cell(err, events):
    e = "0" if err == 0 else f"{err:.1e}"
    return e if events is None else f"{e} ({events:,})"


def main():
    print("| collective | design, routing | GPUs | exact: events |"
          + "".join(f" {t}: error (events) |" for t in TOLERANCES))
    print("|---|---|---:|---:|" + "---:|" * len(TOLERANCES))
    worst = [0.0] * len(TOLERANCES)
    speed = []
    for what, design, gpus, args in CASES:
        exact, events, s0 = run(gpus, args, None)
        cells, ups = [], []
        for i, t in enumerate(TOLERANCES):
            times, ev, s = run(gpus, args, t)
            err = error(times, exact)
            worst[i] = max(worst[i], err)
            cells.append(cell(err, ev))
            ups.append(s0 / s)
        speed.append((what, design, gpus, s0, ups))
        ev0 = "-" if events is None else f"{events:,}"
        print(f"| {what} | {design} | {gpus:,} | {ev0} | " + " | ".join(cells) + " |")
    print("| **worst** | | | | " + " | ".join(f"**{cell(w, None)}**" for w in worst) + " |")
    if TIMING:
        print()
        print("| collective | design, routing | GPUs | exact s |"
              + "".join(f" {t} |" for t in TOLERANCES))
        print("|---|---|---:|---:|" + "---:|" * len(TOLERANCES))
        for what, design, gpus, s0, ups in speed:
            print(f"| {what} | {design} | {gpus:,} | {s0:.2f} | "
                  + " | ".join(f"{u:.1f}x" for u in ups) + " |")


main()
