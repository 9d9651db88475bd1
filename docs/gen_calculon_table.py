#!/usr/bin/env python3
"""Generates the table of docs/calculon.md with `railsim estimate` (never hand-typed): the eight
Megatron-LM runs of Korthikanti et al. 2022 (tests/data/megatron-korthikanti-2022.json), timed
from railsim's presets and from the same figures written as Calculon files
(tests/data/calculon/), next to Calculon's own published estimates of the same runs
(tests/data/calculon/calculon-validation-sc23.json, which names its source).

Usage: python3 docs/gen_calculon_table.py [path/to/railsim] > /tmp/table.md
"""
import json
import os
import subprocess
import sys

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "./build/railsim"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")
# Virtual pipeline stages of the runs, as railsim's validation takes them (docs/validation.md).
INTERLEAVE = {"22B": 1, "175B": 3, "530B": 3, "1T": 1}


def estimate(gpu, model, run, mode):
    args = [RAILSIM, "estimate", "--gpu", gpu, "--model", model, "--gpus", str(run["gpus"]),
            "--hb-domain", "8", "--nic-gbps", "200", "--switch", "QM9700",
            "--stack", "megatron-lm-2022", "--batch", str(run["global_batch"]),
            "--tp", str(run["tp"]), "--pp", str(run["pp"]), "--dp", "1",
            "--micro-batch", str(run["micro_batch"]), "--interleave", str(INTERLEAVE[run["name"]]),
            "--recompute", "full" if mode == "full" else "selective",
            "--sp", "off" if mode == "full" else "on", "--json"]
    out = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["iteration_time_s"]


def err(t, ref):
    return f"{100 * (t / ref - 1):+.1f}%"


with open(os.path.join(DATA, "megatron-korthikanti-2022.json")) as f:
    k = json.load(f)
with open(os.path.join(DATA, "calculon", "calculon-validation-sc23.json")) as f:
    calculon = json.load(f)
calc_gpu = os.path.join(DATA, "calculon", "systems", "a100-sxm-80gb.json")
print("| model | GPUs (tp x pp) | mode | measured (s) | railsim, presets (s) | error |"
      " railsim, Calculon files (s) | error | Calculon (s) | error |")
print("|---|---|---|---|---|---|---|---|---|---|")
errors = {"preset": [], "calc": [], "calculon": []}
for mode, label in (("full", "full recompute"), ("selective_sp", "selective + SP")):
    for run in k["models"]:
        measured = k["iteration_time_s"][mode][run["name"]]
        preset = estimate("A100-SXM-80GB", "Megatron-" + run["name"], run, mode)
        calc_model = os.path.join(DATA, "calculon", "models", f"megatron-{run['name']}.json")
        calc = estimate(calc_gpu, calc_model, run, mode)
        if calculon["measured_s"][mode][run["name"]] != measured:
            sys.exit(f"calculon-validation-sc23.json: measured {run['name']} {mode} differs")
        # Calculon prints its time to two decimals and its error from the unrounded time, as
        # 1 - calc / measured: the error column is that figure with railsim's sign.
        theirs = calculon["iteration_time_s"][mode][run["name"]]
        theirs_err = -calculon["printed_delta_percent"][mode][run["name"]]
        errors["preset"].append(abs(preset / measured - 1))
        errors["calc"].append(abs(calc / measured - 1))
        errors["calculon"].append(abs(theirs_err) / 100)
        print(f"| {run['name']} | {run['gpus']} ({run['tp']} x {run['pp']}) | {label} | "
              f"{measured:.2f} | {preset:.2f} | {err(preset, measured)} | {calc:.2f} | "
              f"{err(calc, measured)} | {theirs:.2f} | {theirs_err:+.1f}% |")


def mean(xs):
    return f"{100 * sum(xs) / len(xs):.1f}%"


print(f"| mean absolute error | | | | | {mean(errors['preset'])} | | {mean(errors['calc'])} | | "
      f"{mean(errors['calculon'])} |")
