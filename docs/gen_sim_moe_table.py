#!/usr/bin/env python3
"""Generates the MoE all-to-all table of docs/sim.md with `railsim sim` (never hand-typed).

Usage: python3 docs/gen_sim_moe_table.py [path/to/railsim] > /tmp/table.md
Every figure is the completion time of a uniform all-to-all of 256 MB per GPU over all GPUs,
aggregated by link class (validated against flow-by-flow simulation in tests/sim), on
rail_optimized and on rail_only with hb_first forwarding.
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
BYTES = "256MB"


def sim(n, k, hb, nic, design, mode="store", chunks=8):
    switch = "QM9700" if nic == 400 else "ETH-51.2T-64x800G"
    args = [RAILSIM, "sim", "--gpus", str(n), "--hb-domain", str(k), "--hb-GBps", str(hb),
            "--nic-gbps", str(nic), "--switch", switch, "--design", design,
            "--collective", "alltoall", "--bytes", BYTES, "--aggregate", "on",
            "--forwarding", mode, "--chunks", str(chunks), "--json"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["completion_time_s"]


SIZES = {8: [1024, 32768], 72: [1152, 32760], 256: [1024, 32768]}
print("| K | N | HB GB/s | NIC Gb/s | rail_optimized ms | two-phase | store-and-forward |"
      " pipelined (8 chunks) | pipelined (32 chunks) | (K-1)/K B_nic/B_hb N/(N-K) |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k, sizes in SIZES.items():
    for hb in (450, 900):
        for nic in (400, 800):
            for n in sizes:
                base = sim(n, k, hb, nic, "rail_optimized")
                two = sim(n, k, hb, nic, "rail_only", "two-phase")
                store = sim(n, k, hb, nic, "rail_only", "store")
                p8 = sim(n, k, hb, nic, "rail_only", "pipelined", 8)
                p32 = sim(n, k, hb, nic, "rail_only", "pipelined", 32)
                closed = (k - 1) / k * (nic / 8) / hb * n / (n - k)
                pct = lambda t: f"{100 * (t / base - 1):+.1f}%"
                print(f"| {k} | {n} | {hb} | {nic} | {1e3 * base:.3f} | {pct(two)} | {pct(store)} |"
                      f" {pct(p8)} | {pct(p32)} | {100 * closed:.1f}% |")
