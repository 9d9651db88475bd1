#!/usr/bin/env python3
"""Generates the table of docs/model.md section 5 ("The census against the simulator") with
`railsim sim --schedule` (never hand-typed): per case, the flow simulation of one iteration's
communication schedule next to the analytic model, op by op (one occurrence each, like for like),
simulated exact (`--exact`), as the table was measured.

Usage: python3 docs/gen_contention_table.py [path/to/railsim] [seeds] > /tmp/table.md

Cases: GPT-1T on 32,768 H100 (K=8, tp8 pp16 dp256, interleave 8), MoE-1.2T on 4,096 H100 (K=8,
tp8 dp512 ep64: the expert all-to-all crosses HB domains) and GPT-1T on 32,768 GH200 (K=256, tp16
pp8 dp256, interleave 16, micro-batch 2), each on rail_optimized and rail_only, with leaves at
1:1, 2:1 and 3:1 (QM9700 switches, 64 x 400G) under ecmp, adaptive and spray. Columns: the worst
op's simulated / analytic time (the op with the largest |ratio - 1|), and the iteration's
communication (serialised sum) simulated / analytic. Under ecmp the simulation is one hash draw:
the table gives seed 0's worst op, the worst op of the mean over `seeds` seeds (default 12) with the
mean's standard error, and the iteration mean.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
SEEDS = int(sys.argv[2]) if len(sys.argv) > 2 else 12

CASES = [
    ("GPT-1T, 32,768 H100", ["--gpus", "32768", "--gpu", "H100-SXM", "--model", "GPT-1T",
                             "--tp", "8", "--pp", "16", "--dp", "256", "--interleave", "8"]),
    ("MoE-1.2T, 4,096 H100", ["--gpus", "4096", "--gpu", "H100-SXM", "--model", "MoE-1.2T",
                              "--tp", "8", "--pp", "1", "--dp", "512", "--ep", "64"]),
    ("GPT-1T, 32,768 GH200 K=256", ["--gpus", "32768", "--gpu", "GH200", "--hb-domain", "256",
                                    "--model", "GPT-1T", "--tp", "16", "--pp", "8", "--dp", "256",
                                    "--interleave", "16", "--micro-batch", "2"]),
]


def run(args, design, over, routing, seed):
    cmd = [RAILSIM, "sim", "--schedule", "--switch", "QM9700", "--design", design,
           "--oversubscription", str(over), "--routing", routing, "--seed", str(seed),
           "--exact", "--json"] + args
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    ops = [(f"{o['parallelism']} {o['op']}", o["sim_time_s"] / o["analytic_time_s"])
           for o in j["ops"] if o["analytic_time_s"] > 0]
    return ops, j["completion_time_s"] / j["analytic_time_s"]


def worst(ops, se=None):
    i = max(range(len(ops)), key=lambda k: abs(ops[k][1] - 1))
    name, r = ops[i]
    return f"{r:.3f} +- {se[i]:.3f} ({name})" if se else f"{r:.3f} ({name})"


def mean_se(x):
    m = sum(x) / len(x)
    v = sum((y - m) ** 2 for y in x) / (len(x) - 1)
    return m, (v / len(x)) ** 0.5


def combos():
    """Every row of the table, in its order: (case index, design, leaf ratio, routing)."""
    for case in range(len(CASES)):
        for design in ("rail_optimized", "rail_only"):
            for over in (1, 2, 3):
                for routing in ("ecmp", "adaptive", "spray"):
                    yield case, design, over, routing


def seeds(routing):
    return range(SEEDS) if routing == "ecmp" else range(1)


def main():
    jobs = [(row, seed) for row in combos() for seed in seeds(row[3])]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = dict(zip(jobs, pool.map(
            lambda j: run(CASES[j[0][0]][1], *j[0][1:], j[1]), jobs)))
    print("| case | design | leaf | routing | worst op, sim / analytic | iteration comm |"
          " ecmp: worst op of the mean over seeds | ecmp: iteration, mean |")
    print("|---|---|---:|---|---|---:|---|---:|")
    for row in combos():
        case, design, over, routing = row
        draws = [done[(row, seed)] for seed in seeds(routing)]
        ops, it = draws[0]
        mean_op, mean_it = "", ""
        if routing == "ecmp":
            stats = [mean_se([d[0][i][1] for d in draws]) for i in range(len(ops))]
            means = [(ops[i][0], stats[i][0]) for i in range(len(ops))]
            mean_op = worst(means, [st[1] for st in stats])
            mean_it = f"{sum(d[1] for d in draws) / len(draws):.3f}"
        print(f"| {CASES[case][0]} | {design} | {over}:1 | {routing} | {worst(ops)} |"
              f" {it:.3f} | {mean_op} | {mean_it} |")


if __name__ == "__main__":
    main()
