#!/usr/bin/env python3
"""Rail-only against rail-optimized on the shipped defaults, from Python: the figures of the
README's "What it finds" section (network cost and power saved, and the best plan's iteration
time of GPT-1T on each design), computed with the railsim module.

    PYTHONPATH=build/python python3 examples/rail_only_vs_optimized.py

Every number printed is the one `railsim compare` prints for the same inputs (a ctest checks it).
"""
import railsim

GPUS = 32768
CLUSTERS = [("H100-SXM", 8), ("GH200", 256)]  # K = 8 (DGX H100), K = 256 (GH200 NVL256)
CATALOGS = ["paper-ratio", "ib-ndr-thirdparty-2024"]
DESIGNS = ["rail_optimized", "rail_only", "ideal"]


def saving(x, reference):
    return 1 - x / reference


def main():
    print(f"Network of {GPUS:,} GPUs on 128-port 51.2T switches: rail-only's saving against "
          "rail-optimized")
    for gpu, k in CLUSTERS:
        for catalog in CATALOGS:
            d = {name: railsim.design(gpu=gpu, gpus=GPUS, hb_domain=k, design=name,
                                      catalog=catalog)
                 for name in ("rail_optimized", "rail_only")}
            ro, opt = d["rail_only"], d["rail_optimized"]
            print(f"  {gpu} K={k} catalog {catalog}: tiers {opt.tiers} -> {ro.tiers}, "
                  f"cost -{100 * saving(ro.cost_usd, opt.cost_usd):.1f}%, "
                  f"power -{100 * saving(ro.power_w, opt.power_w):.1f}%")

    print("GPT-1T, batch 4,096, stack megatron-core-2024: best plan per design")
    for flash in (True, False):
        for gpu, k in CLUSTERS:
            times = {}
            for name in DESIGNS:
                p = railsim.plan(gpu=gpu, gpus=GPUS, hb_domain=k, design=name, model="GPT-1T",
                                 batch=4096, flash_attention=flash, top=1).plans[0]
                times[name] = p.iteration_time_s
                s = p.strategy
                print(f"  {gpu} K={k} flash_attention {'on' if flash else 'off'} {name}: "
                      f"{p.iteration_time_s:.2f} s, tp{s.tp} pp{s.pp} dp{s.dp}")
            print(f"  {gpu} K={k} flash_attention {'on' if flash else 'off'}: rail_only vs "
                  f"rail_optimized {100 * (times['rail_only'] / times['rail_optimized'] - 1):+.1f}%,"
                  f" ideal faster by {100 * saving(times['ideal'], times['rail_optimized']):.0f}%")


if __name__ == "__main__":
    main()
