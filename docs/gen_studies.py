#!/usr/bin/env python3
"""Generates docs/studies.md's tables and plots with `railsim sweep --study` (never hand-typed).

Usage: python3 docs/gen_studies.py [path/to/railsim] [image folder] > /tmp/studies_tables.md
Runs each study once with --csv and --plot <image folder>/study_<name>.png (default docs/img: run
it from the repository root), and prints one markdown table per study, pivoted from the tidy rows
(each study's run time goes to stderr).
"""
import csv
import io
import subprocess
import sys
import time

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
IMG = sys.argv[2] if len(sys.argv) > 2 else "docs/img"
TIME_STUDIES = {"hb-domain": ("hb_domain", "K"), "hb-bandwidth": ("hb_GBps", "HB GB/s"),
                "nic-bandwidth": ("nic_gbps", "NIC Gb/s"), "batch": ("batch", "batch")}


def run(study, extra=(), plot=None):
    args = [RAILSIM, "sweep", "--study", study, "--csv",
            "--plot", f"{IMG}/study_{plot or study}.png", *extra]
    start = time.monotonic()
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out))), time.monotonic() - start


def num(x, fmt):
    return format(float(x), fmt) if x != "" else "-"


def timing(study, rows):
    col, label = TIME_STUDIES[study]
    print(f"| GPU | {label} | rail_optimized s | rail_only s | ideal s | rail_only vs rail_optimized"
          f" | best plan (rail_only) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    by = {}
    for r in rows:
        by.setdefault((r["gpu"], float(r[col])), {})[r["design"]] = r
    for (gpu, x), d in by.items():
        ro = d["rail_only"]
        print(f"| {gpu} | {x:g} | {num(d['rail_optimized']['best_iteration_time_s'], '.3f')} |"
              f" {num(ro['best_iteration_time_s'], '.3f')} |"
              f" {num(d['ideal']['best_iteration_time_s'], '.3f')} |"
              f" {num(ro['vs_rail_optimized_pct'], '+.2f')}% | {ro['best_plan']} |")


def cluster_size(rows):
    print("| GPU | GPUs | tiers (rail_optimized / rail_only) | rail_optimized cost | rail_only cost"
          " | cost saving | power saving |")
    print("|---|---:|---|---:|---:|---:|---:|")
    by = {}
    for r in rows:
        by.setdefault((r["gpu"], int(r["gpus"])), {})[r["design"]] = r
    for (gpu, n), d in by.items():
        a, b = d["rail_optimized"], d["rail_only"]
        print(f"| {gpu} | {n:,} | {a['tiers']} / {b['tiers']} | ${float(a['cost_usd']) / 1e6:,.1f}M |"
              f" ${float(b['cost_usd']) / 1e6:,.1f}M | {100 * float(b['cost_saving']):.1f}% |"
              f" {100 * float(b['power_saving']):.1f}% |")


def moe(rows):
    print("| K | rail_optimized ms | rail_only, HB 450 GB/s | rail_only, HB 900 GB/s |"
          " (K-1)/K x B_nic/B_hb x N/(N-K), HB 450 |")
    print("|---:|---:|---:|---:|---:|")
    by = {}
    for r in rows:
        by.setdefault(int(r["hb_domain"]), {})[(r["design"], float(r["hb_GBps"]))] = r
    for k, d in by.items():
        closed = 100 * (k - 1) / k * 50 / 450 * 32768 / (32768 - k)
        print(f"| {k} | {1e3 * float(d[('rail_optimized', 450.0)]['alltoall_time_s']):.3f} |"
              f" {num(d[('rail_only', 450.0)]['alltoall_vs_rail_optimized_pct'], '+.2f')}% |"
              f" {num(d[('rail_only', 900.0)]['alltoall_vs_rail_optimized_pct'], '+.2f')}% |"
              f" {closed:.2f}% |")


for study in ["hb-domain", "hb-bandwidth", "nic-bandwidth", "batch", "cluster-size",
              "moe-alltoall"]:
    rows, seconds = run(study)
    print(f"\n### {study}: {len(rows)} rows\n", file=sys.stdout)
    print(f"{study}: {seconds:.1f} s", file=sys.stderr)
    if study in TIME_STUDIES:
        timing(study, rows)
    elif study == "cluster-size":
        cluster_size(rows)
    else:
        moe(rows)
rows, seconds = run("cluster-size", ["--catalog", "paper-ratio"], "cluster-size_paper-ratio")
print("\n### cluster-size with --catalog paper-ratio\n")
cluster_size(rows)
