#!/usr/bin/env python3
"""Generates the outputs quoted in docs/walkthrough.md: a new user's tasks, each command run on
this build and the lines of its output that answer the task (never hand-typed).

Usage: python3 docs/gen_walkthrough.py [path/to/railsim] > /tmp/walkthrough_blocks.md
Each task prints one fenced block: the command lines (`$ railsim ...`) and the answer lines they
printed. Spec files the tasks write (a 64-port switch, a per-switch price quote, a 16-port switch)
go to a scratch folder, named in the block as the user would name them. About 15 s on 2 cores.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

RAILSIM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./build/railsim")
SCRATCH = tempfile.mkdtemp(prefix="railsim-walkthrough-")


def write(name, obj):
    with open(os.path.join(SCRATCH, name), "w", encoding="utf-8") as f:
        json.dump(obj, f)


def run(args, keep=None, expect_error=False):
    """Runs `railsim ARGS` in the scratch folder; returns the lines to show: all of them, or those
    matching any of the `keep` patterns, in order."""
    r = subprocess.run([RAILSIM, *args], cwd=SCRATCH, capture_output=True, text=True)
    if (r.returncode != 0) != expect_error:
        sys.exit(f"railsim {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    text = (r.stderr if expect_error else r.stdout).rstrip("\n")
    lines = text.splitlines()
    if keep:
        lines = [l for l in lines if any(re.search(k, l) for k in keep)]
    return lines


def block(title, steps):
    print(f"#### {title}\n")
    print("```")
    for args, lines in steps:
        other = args[0] == "!"  # another program's command line
        words = " ".join(a if re.fullmatch(r"[\w.,:=/+-]+", a) else f"'{a}'"
                         for a in args[other:])
        print(("$ " if other else "$ railsim ") + words)
        for l in lines:
            print(l.rstrip())
    print("```\n")


NVL72 = ["--gpu", "GB200", "--hb-domain", "72", "--nic-gbps", "800"]

# 1. 16,384 GB200 in NVL72 racks with 800G NICs.
job = NVL72 + ["--gpus", "16416"]
a = ["compare", *job, "--job-gpus", "16384"]
b = ["compare", *job, "--job-gpus", "16344", "--batch", "4086", "--train-tokens", "15e12"]
c = ["plan", *NVL72, "--gpus", "18432", "--top", "1"]
block("1. 16,384 GB200 in NVL72 racks, 800G NICs", [
    (a, run(a, expect_error=True)),
    (b, run(b, keep=[r"^job:", r"^routing", r"^  (cost|power|best iteration time|vs rail_"
                     r"optimized|best plan|days to train) ", r"note: the routing"])),
    (c, run(c, keep=[r"^note: a batch", r"^1 "])),
])

# 2. The report of 18,432 GB200 to send.
r = ["report", *NVL72, "--gpus", "18432", "--train-tokens", "15e12", "--out", "report.html"]
block("2. A report to send", [(r, run(r))])

# 3. 24,576 H100 on one's own 64-port switch, priced by a per-switch quote.
write("my64.json", {"name": "my-64x400G", "radix": 64, "port_gbps": 400, "family": "ethernet"})
write("quote.json", {"name": "my-quote", "extends": "ib-ndr-thirdparty-2024",
                     "switch": {"price_usd_per_switch": 30000, "price_usd_per_port": 0,
                                "source": "vendor quote, 2026-11"}})
q = ["compare", "--gpus", "24576", "--switch", "my64.json", "--catalog", "quote.json", "--no-perf"]
block("3. One's own switch and a per-switch quote", [
    (q, run(q, keep=[r"^switch ", r"^  (tiers|switches|cost|power|cost saving) "]))])

# 4. Meta's Llama 3 405B plan on 8,192 H100 against the best.
p = ["plan", "--gpus", "8192", "--model", "Llama-3-405B", "--batch", "2048", "--top", "1",
     "--explain", "--against", "tp8 pp16 dp64 v7 selective"]
block("4. Meta's Llama 3 405B plan against the best", [
    (p, run(p, keep=[r"^#  tp", r"^[123] ", r"^the best plans of other shapes", r"^your plan",
                     r"^the fastest plan of its shape"]))])

# 5. Time to train with failures, the throughput taken from each design's best plan.
g = ["fail", "goodput", "--gpus", "32768", "--model", "GPT-1T", "--tokens", "15e12",
     "--trials", "200"]
block("5. Days to train 15T tokens with failures", [
    (g, run(g, keep=[r"^ETTR mean", r"^tokens/s", r"^best plan", r"^days to train"]))])

# 6. The graph of a small fabric, drawn.
write("sw16.json", {"name": "sw16", "radix": 16, "port_gbps": 400, "family": "ethernet"})
e = ["design", "--gpus", "64", "--hb-domain", "8", "--switch", "sw16.json", "--export", "dot",
     "f.dot"]
lines = run(e, keep=[r"^design ", r"^1 Clos", r"^graph written"])
svg = subprocess.run(["dot", "-Tsvg", os.path.join(SCRATCH, "f.dot")], capture_output=True,
                     text=True, check=True).stdout
size = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', svg)
block("6. The fabric as a graph", [
    (e, lines), (["!", "dot", "-Tsvg", "f.dot", "-o", "f.svg"],
                 [f"(a drawing of {size.group(1)} x {size.group(2)} pt)"])])

# 7. The cheapest network within 1% of rail-optimized, every candidate in JSON.
o = ["optimize", "--within", "1", "--of", "rail_optimized", "--all", "--json"]
doc = json.loads("\n".join(run(o)))
block("7. Every candidate of optimize, in JSON", [
    (o, [f'"frontier": {len(doc["frontier"])} rows, "all": {len(doc["all"])} rows, cheapest '
         f'{doc["cheapest"]["design"]} {doc["cheapest"]["oversubscription"]:g}:1 on '
         f'{doc["cheapest"]["switch"]}, ${doc["cheapest"]["cost_usd"] / 1e6:.2f}M'])])
