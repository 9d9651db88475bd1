#!/usr/bin/env python3
"""Generates the multi-plane what-if table of docs/failures.md with `railsim fail whatif`.

Usage: python3 docs/gen_planes_whatif_table.py [path/to/railsim] > /tmp/planes_whatif.md
1,024 B300 (K=8, one 800G NIC per GPU) on the 102.4T switch, GPT-1T with a fixed strategy (tp 8,
pp 4, batch 512: the what-if times the same plan on the healthy and the degraded network), the
default routing (ecmp) and forwarding through HB-domain peers (PXN); each failure on each design,
timed by the analytic model and by the flow simulator on the degraded Fabric:
- the NIC as 4 x 200G in 4 planes: a whole plane lost, and one leaf of a plane;
- the NIC as 2 x 400G on a ToR pair (dual ToR, one plane): one ToR of a pair lost;
- the unsplit 800G NIC (one plane): one leaf lost, its GPUs forwarded through HB peers.
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
BASE = ["--gpus", "1024", "--gpu", "B300", "--switch", "ETH-102.4T-128x800G", "--model", "GPT-1T",
        "--tp", "8", "--pp", "4", "--batch", "512", "--json"]
CASES = [
    ("4 planes of 200G", ["--nic-ports", "4", "--planes", "4"], "plane:1", "a whole plane"),
    ("4 planes of 200G", ["--nic-ports", "4", "--planes", "4"], "leaf:0", "one leaf of plane 0"),
    ("2 x 400G, dual ToR", ["--nic-ports", "2", "--dual-tor"], "leaf:0", "one ToR of a pair"),
    ("one 800G plane", [], "leaf:0", "one leaf"),
]


def pct(x):
    return f"{(x - 1) * 100:+.2f}%"


print("| network | failure | design | GPUs cut off | NIC ports lost | switch links lost "
      "| NIC load factor | analytic | simulated |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for network, extra, failure, what in CASES:
    out = subprocess.run([RAILSIM, "fail", "whatif", "--fail", failure] + BASE + extra,
                         check=True, capture_output=True, text=True).stdout
    for d in json.loads(out)["designs"]:
        caps = {c["tier"]: c for c in d["capacity"]}
        nic = caps.get("GPU-leaf", {"links_lost": 0, "links": 0})
        up = caps.get("leaf-spine", {"links_lost": 0, "links": 0})
        sim = d["simulated"]["degraded_s"] / d["healthy_s"]
        print(f"| {network} | `{failure}` ({what}) | {d['design']} | "
              f"{d['gpus_dead'] + d['gpus_cut_off']} | {nic['links_lost']:,} of {nic['links']:,} | "
              f"{up['links_lost']:,} of {up['links']:,} | {d['nic_load_factor']:.4f} | "
              f"{pct(d['degraded_s'] / d['healthy_s'])} | {pct(sim)} |")
