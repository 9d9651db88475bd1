#!/usr/bin/env python3
"""Generates the MoE all-to-all table of docs/sim.md with `railsim sim` (never hand-typed).

Usage: python3 docs/gen_sim_moe_table.py [path/to/railsim] [uniform|skew] > /tmp/table.md
uniform (the first table): every figure is the completion time of a uniform all-to-all of 256 MB
per GPU over all GPUs, aggregated by link class (validated against flow-by-flow simulation in
tests/sim), on rail_optimized and on rail_only with hb_first forwarding, simulated exact.
skew (the second table): MoE token routing (`--skew`, `--max-domains`) on 128 GPUs, dispatch and
combine simulated flow by flow. Without the second argument both tables are printed.
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
            "--forwarding", mode, "--chunks", str(chunks), "--exact", "--json"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["completion_time_s"]


def uniform_table():
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
                    print(f"| {k} | {n} | {hb} | {nic} | {1e3 * base:.3f} | {pct(two)} |"
                          f" {pct(store)} | {pct(p8)} | {pct(p32)} | {100 * closed:.1f}% |")


def skew_sim(n, k, nic, design, mode, phase, skew_args):
    """One MoE phase on the fabric, flow by flow; returns (time_s, moe stats)."""
    switch = "QM9700" if nic == 400 else "ETH-51.2T-64x800G"
    args = [RAILSIM, "sim", "--gpus", str(n), "--hb-domain", str(k), "--nic-gbps", str(nic),
            "--switch", switch, "--design", design, "--routing", "adaptive",
            "--collective", "alltoall", "--bytes", BYTES, "--aggregate", "off",
            "--forwarding", mode, "--batch-tolerance", "1e-4", "--json"]
    if skew_args is not None:
        args += ["--experts", "256", "--topk", "8", "--tokens", "4096", "--moe-phase", phase]
        args += skew_args
    j = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return j["completion_time_s"], j.get("moe")


def skew_table():
    N, K = 128, 8
    ROWS = [("uniform, every pair S/n (no routing)", None),
            ("uniform routing (Zipf s=0)", ["--skew", "zipf:0"]),
            ("Zipf s=0.4", ["--skew", "zipf:0.4"]),
            ("Zipf s=0.8", ["--skew", "zipf:0.8"]),
            ("Zipf s=1.2", ["--skew", "zipf:1.2"]),
            ("Zipf s=0.8, at most 4 domains", ["--skew", "zipf:0.8", "--max-domains", "4"]),
            ("Zipf s=1.2, at most 4 domains", ["--skew", "zipf:1.2", "--max-domains", "4"])]
    print("| NIC Gb/s | expert popularity | busiest receiver / mean | domains per token |"
          " dispatch: rail_optimized ms | two-phase | store-and-forward |"
          " combine: rail_optimized ms | two-phase | store-and-forward |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for nic in (400, 800):
        for name, sk in ROWS:
            cells = []
            stats = None
            for phase in ("dispatch", "combine"):
                if sk is None and phase == "combine":  # the uniform all-to-all is its own reverse
                    cells += cells[-3:]
                    continue
                base, stats = skew_sim(N, K, nic, "rail_optimized", "store", phase, sk)
                two, _ = skew_sim(N, K, nic, "rail_only", "two-phase", phase, sk)
                store, _ = skew_sim(N, K, nic, "rail_only", "store", phase, sk)
                pct = lambda t: f"{100 * (t / base - 1):+.1f}%"
                cells += [f"{1e3 * base:.3f}", pct(two), pct(store)]
            imb = f"{stats['max_in_over_mean']:.2f}" if stats else "1.00"
            dom = f"{stats['domains_per_token']:.2f}" if stats else "-"
            print(f"| {nic} | {name} | {imb} | {dom} | " + " | ".join(cells) + " |")


WHICH = sys.argv[2] if len(sys.argv) > 2 else "both"
if WHICH in ("uniform", "both"):
    uniform_table()
if WHICH == "both":
    print()
if WHICH in ("skew", "both"):
    skew_table()
