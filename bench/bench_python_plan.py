#!/usr/bin/env python3
"""railsim.plan from Python against bench_perf's BM_PlanGpt1T32kGpus (the same search in C++):
GPT-1T on 32,768 H100 (K = 8) or GH200 (K = 256), top 10, one or two threads. The Python figure
includes what the C++ benchmark leaves out: reading the presets, building the cluster and the
search context, the JSON document of the 10 plans and json.loads into Python objects.

    PYTHONPATH=build/python python3 bench/bench_python_plan.py [--threads 1] [--repeat 50]
    ./build/bench_perf --benchmark_filter=BM_PlanGpt1T32kGpus --benchmark_repetitions=3
"""
import argparse
import statistics
import time

import railsim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    for gpu, k in (("H100-SXM", 8), ("GH200", 256)):
        def call():
            return railsim.plan(gpu=gpu, gpus=32768, hb_domain=k, model="GPT-1T", top=10,
                                threads=args.threads)
        r = call()  # warm-up
        times, cpu = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            call()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"railsim.plan GPT-1T 32,768 {gpu} K={k} threads={args.threads}: median "
              f"{1e3 * statistics.median(times):.3f} ms real, {1e3 * statistics.median(cpu):.3f} "
              f"ms CPU (process), min {1e3 * min(times):.3f} ms real over {args.repeat} calls "
              f"({r.evaluated} strategies)", flush=True)


if __name__ == "__main__":
    main()
