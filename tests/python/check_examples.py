#!/usr/bin/env python3
"""Runs one of examples/ and checks every number it prints against the CLI's --json for the same
inputs (formatted the same way), and that a chart it writes is a real PNG.

    check_examples.py EXAMPLES_DIR RAILSIM_CLI rail_only_vs_optimized|sweep_hb_domain
"""
import json
import os
import struct
import subprocess
import sys
import tempfile


def cli(railsim, *args):
    out = subprocess.run([railsim, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run_example(examples, name, *args):
    out = subprocess.run([sys.executable, os.path.join(examples, name + ".py"), *args],
                         check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def check_rail_only(examples, railsim):
    got = run_example(examples, "rail_only_vs_optimized")
    want = []
    clusters = [("H100-SXM", 8), ("GH200", 256)]
    for gpu, k in clusters:
        for catalog in ["paper-ratio", "ib-ndr-thirdparty-2024"]:
            c = cli(railsim, "compare", "--gpu", gpu, "--gpus", "32768", "--hb-domain", str(k),
                    "--catalog", catalog)
            d = {x["design"]: x for x in c["designs"]}
            want.append(f"  {gpu} K={k} catalog {catalog}: tiers {d['rail_optimized']['tiers']} "
                        f"-> {d['rail_only']['tiers']}, "
                        f"cost -{100 * d['rail_only']['cost_saving']:.1f}%, "
                        f"power -{100 * d['rail_only']['power_saving']:.1f}%")
    for flash in ("on", "off"):
        for gpu, k in clusters:
            c = cli(railsim, "compare", "--gpu", gpu, "--gpus", "32768", "--hb-domain", str(k),
                    "--flash-attention", flash)
            t = {}
            for x in c["designs"]:
                t[x["design"]] = x["best_iteration_time_s"]
                want.append(f"  {gpu} K={k} flash_attention {flash} {x['design']}: "
                            f"{x['best_iteration_time_s']:.2f} s, {x['best_plan']}")
            want.append(f"  {gpu} K={k} flash_attention {flash}: rail_only vs rail_optimized "
                        f"{100 * (t['rail_only'] / t['rail_optimized'] - 1):+.1f}%, ideal faster "
                        f"by {100 * (1 - t['ideal'] / t['rail_optimized']):.0f}%")
    numbered = [line for line in got if line.startswith("  ")]
    assert numbered == want, "\n".join(["example:"] + numbered + ["CLI:"] + want)
    print(f"{len(want)} lines equal the CLI's")


def check_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    assert data[12:16] == b"IHDR", "no IHDR chunk first"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 300 and height >= 200, (width, height)
    assert data.rstrip(b"\0")[-8:-4] == b"IEND", "no IEND chunk at the end"
    assert len(data) > 10_000, f"only {len(data)} bytes"
    print(f"{path}: PNG {width}x{height}, {len(data)} bytes")


def check_sweep(examples, railsim):
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "hb_domain.png")
        got = run_example(examples, "sweep_hb_domain", png)
        rows = cli(railsim, "sweep", "--gpus", "32768", "--hb-domain", "8,16,32,64,128,256",
                   "--model", "GPT-1T")["rows"]
        want = [f"K={r['hb_domain']} {r['design']}: " +
                (f"{r['best_iteration_time_s']:.4f} s {r['best_plan']}"
                 if r["best_iteration_time_s"] is not None else "no plan") for r in rows]
        numbered = [line for line in got if line.startswith("K=")]
        assert numbered == want, "\n".join(["example:"] + numbered + ["CLI:"] + want)
        assert len(want) == 18
        check_png(png)
    print(f"{len(want)} rows equal the CLI's")


if __name__ == "__main__":
    examples, railsim, which = sys.argv[1:4]
    {"rail_only_vs_optimized": check_rail_only, "sweep_hb_domain": check_sweep}[which](
        examples, railsim)
