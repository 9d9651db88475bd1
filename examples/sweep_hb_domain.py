#!/usr/bin/env python3
"""Iteration time of GPT-1T's best plan against the HB-domain size K, per network design, on
32,768 H100-class GPUs: a railsim.sweep, plotted with matplotlib.

    PYTHONPATH=build/python python3 examples/sweep_hb_domain.py hb_domain.png

Prints one line per point and design (the rows of `railsim sweep --json` for the same inputs;
a ctest checks them) and writes the chart to the path given.
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

import railsim  # noqa: E402

K_VALUES = [8, 16, 32, 64, 128, 256]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plot", help="the chart to write (.png, .svg or .pdf)")
    ap.add_argument("--gpus", type=int, default=32768)
    ap.add_argument("--model", default="GPT-1T")
    args = ap.parse_args()

    rows = railsim.sweep(gpus=args.gpus, hb_domain=K_VALUES, model=args.model)
    series = {}
    for r in rows:
        t = r.best_iteration_time_s
        print(f"K={r.hb_domain} {r.design}: "
              + (f"{t:.4f} s {r.best_plan}" if t is not None else "no plan"))
        if t is not None:
            series.setdefault(r.design, []).append((r.hb_domain, t))

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    # rail_only draws over rail_optimized where their best plans are the same: dashed on top.
    style = {"rail_optimized": ("-", 7), "rail_only": ("--", 4), "ideal": (":", 5)}
    for design, pts in series.items():
        ls, ms = style.get(design, ("-", 5))
        ax.plot([k for k, _ in pts], [t for _, t in pts], linestyle=ls, marker="o",
                markersize=ms, label=design)
    ax.set_xscale("log", base=2)
    ax.set_xticks(K_VALUES, [str(k) for k in K_VALUES])
    ax.set_xlabel("HB-domain size K (GPUs)")
    ax.set_ylabel("iteration time of the best plan (s)")
    ax.set_title(f"{args.model} on {args.gpus:,} GPUs")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
