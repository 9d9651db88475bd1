#!/usr/bin/env python3
"""Generates the what-if table of docs/failures.md with `railsim fail whatif` (never hand-typed).

Usage: python3 docs/gen_whatif_table.py [path/to/railsim] > /tmp/whatif.md
One failure of each class (a GPU, a NIC, a NIC-leaf link, a leaf, a spine, a core switch, a
leaf-spine link, an HB domain) on 32,768 H100 (K=8) and 32,768 GH200 (K=256), GPT-1T and
MoE-1.2T, rail_optimized and rail_only on the default 51.2T switch (128 x 400G), forwarding
through HB-domain peers on both designs (--pxn on, the default: NCCL's PXN), then a NIC and a
leaf with --pxn off for both (a dead NIC stops the job); 2 spare HB domains; the default routing
(ecmp on the Ethernet switch); the analytic model (no flow simulation at this size).
"""
import json
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
CLUSTERS = [("H100-SXM", 8), ("GH200", 256)]
MODELS = ["GPT-1T", "MoE-1.2T"]
FAILURES = ["gpu:0", "nic:0", "link:0", "leaf:0", "spine:0", "core:0", "uplink:1:0", "domain:0"]
PXN_FAILURES = ["nic:0", "link:0", "leaf:0"]  # the ones forwarding changes
SPARES = 2


def whatif(gpu, k, model, failure, pxn):
    args = [RAILSIM, "fail", "whatif", "--gpus", "32768", "--gpu", gpu, "--hb-domain", str(k),
            "--model", model, "--fail", failure, "--pxn", pxn, "--sim", "off",
            "--spare-domains", str(SPARES), "--json"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


def cell(d):
    if not d["failures"]:
        return "not in this design"
    run = d["options"][0]
    best = max((o for o in d["options"] if o["possible"]), key=lambda o: o["throughput"],
               default=None)
    cut = d["gpus_dead"] + d["gpus_cut_off"]
    what = f"{cut} GPU{'s' if cut > 1 else ''} out, {d['domains_lost']} domain" \
        f"{'s' if d['domains_lost'] > 1 else ''} lost" if cut else \
        f"{d['domains_forwarding']} domain{'s' if d['domains_forwarding'] > 1 else ''} forwarding" \
        if d["domains_forwarding"] else "nothing cut off"
    if run["possible"]:
        return f"{what}; runs at {100 * run['throughput']:.2f}%"
    if best is None:
        return f"{what}; stops"
    return f"{what}; stops; restart: {best['name']}, {100 * best['throughput']:.1f}%"


for pxn, failures in [("on", FAILURES), ("off", PXN_FAILURES)]:
    print(f"With `--pxn {pxn}` and `--spare-domains {SPARES}`:\n")
    print("| cluster | model | failure | rail_optimized | rail_only |")
    print("|---|---|---|---|---|")
    for gpu, k in CLUSTERS:
        for model in MODELS:
            for failure in failures:
                r = whatif(gpu, k, model, failure, pxn)
                if r is None:
                    continue
                cells = [cell(d) for d in r["designs"]]
                print(f"| {gpu} K={k} | {model} | `{failure}` | {cells[0]} | {cells[1]} |")
    print()
