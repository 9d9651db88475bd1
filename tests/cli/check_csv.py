#!/usr/bin/env python3
"""The CSV that railsim prints is what its JSON says: run the CLI with --csv and with --json,
read the CSV with Python's csv module, and check that every row has the header's field count and
that every field equals the JSON value of the same column (numbers within 1e-9 relative, strings
exactly, missing values empty / null).

usage: check_csv.py PATH/TO/railsim
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

RAILSIM = sys.argv[1] if len(sys.argv) > 1 else "railsim"
# The software every output states, in JSON and on every CSV row (spec::software_columns).
SOFTWARE_KEYS = ("stack", "dtype", "flash_attention", "attention_kernel", "compile",
                 "elementwise_kernels", "fp8_casts", "ep_dispatch", "ep_overlap",
                 "fp8_output_layer", "cp_comm")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args):
    p = subprocess.run([RAILSIM] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"railsim {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


def read_csv(text, what):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        fail(f"{what}: no CSV")
        return [], []
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header):
        fail(f"{what}: repeated column names in {header}")
    for i, r in enumerate(body):
        if len(r) != len(header):
            fail(f"{what}: row {i + 1} has {len(r)} fields, the header {len(header)}")
    return header, body


def close(a, b):
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def same(field, value, where):
    """Whether one CSV field holds the JSON value `value`."""
    if value is None:
        ok = field == ""
    elif isinstance(value, bool):
        ok = field == ("true" if value else "false")
    elif isinstance(value, (int, float)):
        try:
            ok = close(float(field), float(value))
        except ValueError:
            ok = False
    elif isinstance(value, str):
        ok = field == value
    elif isinstance(value, list):
        ok = field == ";".join(str(x) for x in value)
    else:
        ok = False
    if not ok:
        fail(f"{where}: CSV {field!r} != JSON {value!r}")


def check_rows(what, header, body, objects, exact_keys):
    if len(body) != len(objects):
        fail(f"{what}: {len(body)} CSV rows, {len(objects)} JSON objects")
    for i, (row, obj) in enumerate(zip(body, objects)):
        if exact_keys and set(obj) != set(header):
            fail(f"{what}: row {i + 1}: JSON keys {sorted(set(obj) ^ set(header))} differ")
        for name, field in zip(header, row):
            if name not in obj:
                fail(f"{what}: row {i + 1}: column {name} not in the JSON")
                continue
            same(field, obj[name], f"{what}: row {i + 1} column {name}")


def flatten(obj, out=None):
    """Leaves of nested JSON objects by their own key (plan's estimate-shaped entries)."""
    out = {} if out is None else out
    for k, v in obj.items():
        if isinstance(v, dict):
            flatten(v, out)
        else:
            if k in out:
                fail(f"key {k} appears twice in {obj}")
            out[k] = v
    return out


def check_compare(args):
    what = "compare " + " ".join(args)
    header, body = read_csv(run(["compare", "--csv"] + args), what)
    designs = json.loads(run(["compare", "--json"] + args))["designs"]
    check_rows(what, header, body, designs, exact_keys=True)
    return header, body


def check_plan(args):
    what = "plan " + " ".join(args)
    header, body = read_csv(run(["plan", "--csv"] + args), what)
    doc = json.loads(run(["plan", "--json"] + args))
    # The routing assumptions, the planes and the software are stated once at the top of the JSON
    # and on every CSV row.
    routing = {k: doc[k] for k in ("routing", "seed", "forwarding", "forward_via", "chunks",
                                   "port_balance", "connections", "planes", "nic_ports",
                                   "dual_tor") + SOFTWARE_KEYS}
    plans = [dict(routing, **flatten(p)) for p in doc["plans"]]
    check_rows(what, header, body, plans, exact_keys=False)


def check_sweep(args):
    what = "sweep " + " ".join(args)
    header, body = read_csv(run(["sweep", "--csv"] + args), what)
    rows = json.loads(run(["sweep", "--json"] + args))["rows"]
    check_rows(what, header, body, rows, exact_keys=True)


def check_traffic(args):
    what = "traffic " + " ".join(args)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pairs.csv")
        j = json.loads(run(["traffic", "--json", "--csv", path] + args))
        with open(path, newline="") as f:
            header, body = read_csv(f.read(), what)
    if len(body) != j["pairs_with_traffic"]:
        fail(f"{what}: {len(body)} rows, pairs_with_traffic {j['pairs_with_traffic']}")
    col = {name: i for i, name in enumerate(header)}
    k = j["hb_domain"]
    sums = {}
    for r in body:
        src, dst = int(r[col["src"]]), int(r[col["dst"]])
        for end, gpu in (("src", src), ("dst", dst)):
            if int(r[col[end + "_domain"]]) != gpu // k or int(r[col[end + "_rail"]]) != gpu % k:
                fail(f"{what}: GPU {gpu}: domain/rail {r}")
        loc = r[col["locality"]]
        total = 0.0
        for p in ("tp", "sp", "pp", "dp", "ep"):
            v = float(r[col[p + "_bytes"]])
            total += v
            sums[(p, loc)] = sums.get((p, loc), 0.0) + v
        if not close(float(r[col["total_bytes"]]), total):
            fail(f"{what}: total_bytes of {r}")
        for key in SOFTWARE_KEYS:
            want = j[key]
            want = ("true" if want else "false") if isinstance(want, bool) else str(want)
            if r[col[key]] != want:
                fail(f"{what}: {key} {r[col[key]]!r}, JSON {want!r}")
    for p, by_loc in j["bytes"].items():
        for loc, want in by_loc.items():
            got = sums.get((p, loc), 0.0)
            if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9 * j["total_bytes"]):
                fail(f"{what}: {p} {loc}: CSV sums {got}, JSON {want}")
    for loc, want in j["bytes_by_locality"].items():
        got = sum(v for (p, l), v in sums.items() if l == loc)
        if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9 * j["total_bytes"]):
            fail(f"{what}: {loc}: CSV sums {got}, JSON {want}")


def main():
    header, body = check_compare([])
    if "perf_model" not in header or any("," not in r[header.index("perf_model")] for r in body):
        fail("compare: perf_model should hold 'GPT-1T, 4096 x 2048' (a quoted comma)")
    check_compare(["--model", "MoE-1.2T"])
    check_compare(["--gpus", "8192", "--batch", "4097"])  # no valid strategy: missing values
    check_compare(["--gpus", "4096", "--no-perf", "--copper-gpu-leaf"])
    check_plan(["--gpus", "4096", "--top", "5"])
    check_plan(["--gpus", "1024", "--model", "MoE-1.2T", "--top", "3"])
    check_plan(["--gpus", "1024", "--gpu", "B300", "--nic-ports", "2", "--planes", "2", "--top", "2"])
    check_compare(["--gpus", "1024", "--gpu", "B300", "--nic-ports", "4", "--planes", "4",
                   "--switch", "ETH-102.4T-128x800G", "--no-perf"])
    check_sweep(["--gpus", "1001,4096", "--batch", "4097,4096", "--model", "GPT-1T,MoE-1.2T"])
    check_sweep(["--gpus", "1024..8192x2", "--nic-gbps", "400,800", "--no-perf"])
    check_sweep(["--gpu", "B300", "--gpus", "4096", "--planes", "1,2,4", "--no-perf"])
    check_traffic(["--gpus", "128", "--tp", "4", "--pp", "2", "--model", "Mixtral-8x7B", "--ep", "4"])
    check_traffic(["--gpus", "256", "--tp", "8", "--pp", "4", "--placement", "shuffled"])
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("CSV and JSON agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
