#!/usr/bin/env python3
"""Runs every docs/gen_*.py generator and checks that what it prints is in its page, verbatim.

Usage: python3 docs/check_generated.py [path/to/railsim] [generator ...]
Each generator's output is cut at blank lines into blocks (a table, a paragraph); every block must
appear in the page as it is, except the markdown headings a script prints between its tables. A block that does not is printed with its first line that is not in
the page, and the exit status is 1: the page was typed by hand or the program's numbers moved, and
the page must be regenerated (the command is in the page, next to the table) in the same commit.
The studies' plots go to a scratch folder, not docs/img. Run from the repository root or anywhere:
paths are taken from this file's folder. CI runs it on the Release build (ctest -L docs).
"""
import os
import subprocess
import sys
import tempfile
import time

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)

# generator -> (page or pages, relative to docs/, extra arguments after the program's path)
GENERATORS = {
    "gen_calculon_table.py": ("calculon.md", []),
    "gen_failures_table.py": ("failures.md", []),
    "gen_blast_radius_table.py": ("failures.md", []),
    "gen_whatif_table.py": ("failures.md", []),
    "gen_sim_moe_table.py": ("sim.md", []),
    "gen_sim_tolerance_table.py": ("sim.md", []),
    "gen_contention_table.py": ("model.md", ["12"]),
    "gen_studies.py": ("studies.md", ["{scratch}"]),
    "gen_planes_table.py": (("design.md", "../README.md"), []),
    "gen_planes_whatif_table.py": ("failures.md", []),
    "gen_walkthrough.py": ("walkthrough.md", []),
}


def blocks(text):
    out, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def check(railsim, name, scratch):
    page, extra = GENERATORS[name]
    args = [a.format(scratch=scratch) for a in extra]
    start = time.monotonic()
    r = subprocess.run([sys.executable, os.path.join(DOCS, name), railsim, *args], cwd=ROOT,
                       capture_output=True, text=True)
    seconds = time.monotonic() - start
    if r.returncode != 0:
        print(f"{name}: exit {r.returncode}\n{r.stderr}")
        return False
    found = blocks(r.stdout)
    if not found:
        print(f"{name}: printed nothing")
        return False
    ok = True
    for one in (page,) if isinstance(page, str) else page:
        with open(os.path.join(DOCS, one), encoding="utf-8") as f:
            doc = f.read()
        for b in found:
            if "\n".join(b) in doc or all(line.startswith("#") for line in b):
                continue  # a heading the script prints between its tables is its own
            ok = False
            missing = next((line for line in b if line not in doc), b[0])
            print(f"{name}: a block of {len(b)} lines is not in docs/{one}; first line not "
                  f"there:\n  {missing}")
    shown = page if isinstance(page, str) else ", ".join(page)
    print(f"{name}: {len(found)} blocks, {'all in' if ok else 'NOT all in'} docs/{shown} "
          f"({seconds:.1f} s)")
    return ok


def main():
    railsim = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                              os.path.join(ROOT, "build", "railsim"))
    names = sys.argv[2:] or list(GENERATORS)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        print(f"unknown generator(s): {', '.join(unknown)}; known: {', '.join(GENERATORS)}")
        return 2
    listed = sorted(f for f in os.listdir(DOCS) if f.startswith("gen_") and f.endswith(".py"))
    unchecked = [f for f in listed if f not in GENERATORS]
    if unchecked:
        print(f"generators this check does not run: {', '.join(unchecked)} (add them)")
        return 1
    with tempfile.TemporaryDirectory(prefix="railsim_docs_") as scratch:
        results = [check(railsim, n, scratch) for n in names]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
