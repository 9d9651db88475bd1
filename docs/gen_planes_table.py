#!/usr/bin/env python3
"""Generates the 2026 comparison table of docs/design.md with `railsim compare` (never hand-typed).

Usage: python3 docs/gen_planes_table.py [path/to/railsim] > /tmp/planes.md
The paper's question on 2026 hardware: HGX B300 (K = 8) at 32,768 and 131,072 GPUs and GB300
NVL72 (K = 72) at 512 and 2,048 racks (36,864 and 147,456 GPUs), 800G NICs, on the 102.4T switch
(ETH-102.4T-128x800G): one plane of 800G ports, or the NIC split in 4 x 200G over 4 planes
(the switch as 512 x 200G). rail_only with one plane is DeepSeek's multi-plane fat-tree (a plane
per local rank). Cost and power under the 2026 catalogs with pluggable and with co-packaged
optics (NICs apart); the best plan's iteration time of GPT-1T and DeepSeek-V3 (4,096 sequences
on B300; 4,608 on GB300, whose GPU counts carry the rack's factor 9 that only the data-parallel
degree can take; megatron-core-2024, bf16) by the analytic model with its contention census; the
routing is the Ethernet default (ecmp), the same for every row.
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
CLUSTERS = [("B300", 8, 32768, 4096), ("B300", 8, 131072, 4096), ("GB300", 72, 36864, 4608),
            ("GB300", 72, 147456, 4608)]
NETWORKS = [("1 x 800G", []), ("4 x 200G", ["--nic-ports", "4", "--planes", "4"])]
MODELS = ["GPT-1T", "DeepSeek-V3"]
SWITCH = "ETH-102.4T-128x800G"


def compare(gpu, k, n, extra, more):
    args = [RAILSIM, "compare", "--gpu", gpu, "--hb-domain", str(k), "--gpus", str(n),
            "--switch", SWITCH, "--json"] + extra + more
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return {d["design"]: d for d in json.loads(out)["designs"]}


def money(x):
    return f"${x / 1e6:,.1f}M"


def mw(x):
    return f"{x / 1e6:.2f} MW"


def secs(d):
    t = d.get("best_iteration_time_s")
    return "no plan" if t is None else f"{t:.3f} s"


print("| cluster | NIC ports, planes | design | tiers | switches | cost | power, pluggable "
      "| power, co-packaged | GPT-1T iteration | DeepSeek-V3 iteration |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for gpu, k, n, batch in CLUSTERS:
    for label, extra in NETWORKS:
        plug = compare(gpu, k, n, extra, ["--catalog", "eth-800g-pluggable-2026", "--no-perf"])
        cpo = compare(gpu, k, n, extra, ["--catalog", "eth-800g-cpo-2026", "--no-perf"])
        runs = {m: compare(gpu, k, n, extra, ["--model", m, "--batch", str(batch)]) for m in MODELS}
        for design in ["rail_optimized", "rail_only"]:
            p = plug[design]
            name = design if not (design == "rail_only" and label == "1 x 800G") else \
                "rail_only (MPFT)"
            saving = ""
            if design == "rail_only":
                saving = f" ({p['cost_saving'] * 100:.1f}% less)"
            print(f"| {n:,} {gpu} (K={k}) | {label} | {name} | {p['tiers']} | {p['switches']:,} | "
                  f"{money(p['cost_usd'])}{saving} | {mw(p['power_w'])} | "
                  f"{mw(cpo[design]['power_w'])} | "
                  + " | ".join(secs(runs[m][design]) for m in MODELS) + " |")
