#!/usr/bin/env python3
"""Generates the HB-domain blast-radius table of docs/failures.md (never hand-typed).

Usage: python3 docs/gen_blast_radius_table.py [path/to/railsim] > /tmp/blast.md
A fixed cluster of 36,864 GH200 (divisible by every K below) in HB domains of K = 8, 16, 32, 72,
144, 256 GPUs; GPT-1T (batch 4,096); for each design its best plan (`railsim plan`) and its
goodput over 90 days (`railsim fail goodput --model GPT-1T`: Llama 3 rates, 1,000 trials, seed
1, auto spares, network failure effects from the Fabric). The figure of merit is the training
throughput per GPU bought: tokens/s of the plan x ETTR x N / (N + spare GPUs).
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
N = 36864
KS = [8, 16, 32, 72, 144, 256]
DESIGNS = ["rail_optimized", "rail_only"]


def run(*args):
    r = subprocess.run([RAILSIM, *args], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


rows = []
for k in KS:
    common = ["--gpu", "GH200", "--gpus", str(N), "--hb-domain", str(k)]
    g = run("fail", "goodput", *common, "--model", "GPT-1T", "--json")
    for i, design in enumerate(DESIGNS):
        p = run("plan", *common, "--model", "GPT-1T", "--design", design, "--top", "1", "--json")
        best = p["plans"][0]
        d = g["designs"][i]
        assert d["design"] == design
        spare_gpus = d["spare_gpus"]
        tput = best["tokens_per_s"]
        eff = tput * d["ettr"]["mean"] * N / (N + spare_gpus)
        rows.append((k, design, d["tiers"], best["iteration_time_s"], d["ettr"]["mean"],
                     spare_gpus, d["ettr_over_gpus_bought"], eff, d["network_cost_usd"]))

top = max(r[7] for r in rows)
print("| K | design | tiers | iteration (s) | ETTR | spare GPUs (auto) | ETTR over GPUs bought |"
      " effective tokens/s per GPU bought | vs best | network cost |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for k, design, tiers, it, ettr, spare, bought, eff, cost in rows:
    print(f"| {k} | {design} | {tiers} | {it:.3f} | {100 * ettr:.2f}% | {spare:,} |"
          f" {100 * bought:.2f}% | {eff / N:,.1f} | {100 * eff / top:.1f}% | ${cost / 1e6:.1f}M |")
