#!/usr/bin/env python3
"""Generates the goodput tables of docs/failures.md with `railsim fail goodput` (never hand-typed).

Usage: python3 docs/gen_failures_table.py [path/to/railsim] > /tmp/tables.md
32,768 H100 (K=8) and 32,768 GH200 (K=256), rail_optimized and rail_only, 90 days, the Llama 3
rates (llama3-meta-2024), 1,000 trials, seed 1, every other input at its default; then the same
clusters with one spare budget of 512 GPUs (64 domains of 8, 2 domains of 256) and 24 h or 4 h
repairs.
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
CLUSTERS = [("H100-SXM", 8), ("GH200", 256)]


def goodput(gpu, k, *extra):
    args = [RAILSIM, "fail", "goodput", "--gpus", "32768", "--gpu", gpu, "--hb-domain", str(k),
            "--days", "90", "--json", *extra]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def pct(x, d=2):
    return f"{100 * x:.{d}f}%"


print("| cluster | design | tiers | interrupting failures / day | interruptions [p5, p95] |"
      " degraded runs | checkpoint every | ETTR mean [p5, p95] | spare GPUs (auto) |"
      " ETTR over GPUs bought | lost to checkpoints / rework / restarts / waits / slowdown |"
      " network cost | per effective GPU-hour (4 y) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
for gpu, k in CLUSTERS:
    for d in goodput(gpu, k)["designs"]:
        e, i, h = d["ettr"], d["interruptions"], d["gpu_hours"]
        lost = " / ".join(pct(h[c] / h["wall"]) for c in
                          ("checkpoint", "rework", "restart", "wait_for_repair", "degraded"))
        print(f"| {gpu} K={k} | {d['design']} | {d['tiers']} | {d['interrupt_rate_per_day']:.2f} |"
              f" {i['mean']:.0f} [{i['p5']:.0f}, {i['p95']:.0f}] | {d['degradations']['mean']:.0f} |"
              f" {d['checkpoint_interval_min']:.1f} min | {pct(e['mean'])} [{pct(e['p5'])},"
              f" {pct(e['p95'])}] | {d['spare_gpus']:,} ({d['spare_domains']} domains) |"
              f" {pct(d['ettr_over_gpus_bought'])} | {lost} | ${d['network_cost_usd'] / 1e6:.2f}M |"
              f" ${d['network_cost_per_effective_gpu_hour_usd']:.3f} |")

print()
print("| cluster | spare budget | repair | rail_optimized ETTR | rail_only ETTR |"
      " time waiting for repair (rail_optimized) |")
print("|---|---:|---:|---:|---:|---:|")
for gpu, k in CLUSTERS:
    spares = 512 // k
    for repair in ("24", "4"):
        r = goodput(gpu, k, "--spare-domains", str(spares), "--repair-h", repair)["designs"]
        wait = r[0]["gpu_hours"]["wait_for_repair"] / r[0]["gpu_hours"]["wall"]
        print(f"| {gpu} K={k} | 512 GPUs ({spares} domains) | {repair} h |"
              f" {pct(r[0]['ettr']['mean'])} | {pct(r[1]['ettr']['mean'])} | {pct(wait)} |")
