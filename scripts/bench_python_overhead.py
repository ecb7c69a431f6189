#!/usr/bin/env python3
"""Overhead of the Python layer (docs/python.md): medians of alternating runs of the same workload
through `attnsim run --json` (a process each), the C++ core alone (attnsim._core.run: the JSON
text) and attnsim.run() (the core plus json.loads and the DataFrames), in one warm interpreter.
Run: PYTHONPATH=build/python /usr/bin/python3 scripts/bench_python_overhead.py [-n 21] [--set k=v ...]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
import attnsim  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=21, help="runs of each (default 21)")
    ap.add_argument("--device", default="h200")
    ap.add_argument("--kernel", default="flash2")
    ap.add_argument("--set", action="append", default=None, help="workload key=value (default: seq=4096 head_dim=128 heads=4)")
    ap.add_argument("--binary", default=os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))
    a = ap.parse_args()
    sets = a.set or ["seq=4096", "head_dim=128", "heads=4"]
    keys = dict(s.split("=", 1) for s in sets)
    cmd = [a.binary, "run", "--device", a.device, "--kernel", a.kernel, "--json"] + sum((["--set", s] for s in sets), [])
    cli_t, core_t, py_t = [], [], []
    sets_core = [f"{k}={v}" for k, v in keys.items()]
    want = None
    for i in range(a.n + 1):  # the first pair warms caches and is not counted
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        t1 = time.perf_counter()
        r = attnsim.run(a.device, a.kernel, **keys)
        t2 = time.perf_counter()
        attnsim._core.run(a.device, a.kernel, "", sets_core, "")
        t3 = time.perf_counter()
        want = want or json.loads(out)
        assert r.to_dict() == want, "attnsim.run() differs from attnsim run --json"
        if i:
            cli_t.append(t1 - t0)
            py_t.append(t2 - t1)
            core_t.append(t3 - t2)
    c, p, k = statistics.median(cli_t), statistics.median(py_t), statistics.median(core_t)
    print(f"{a.kernel} on {a.device} {' '.join(sets)}: {a.n} alternating runs, medians")
    print(f"  attnsim run --json (process): {c * 1e3:8.1f} ms")
    print(f"  attnsim._core.run (C++ only): {k * 1e3:8.1f} ms")
    print(f"  attnsim.run() (in Python):    {p * 1e3:8.1f} ms   ({(p / c - 1) * 100:+.1f} % vs the process, "
          f"{(p / k - 1) * 100:+.1f} % vs the core)")


if __name__ == "__main__":
    main()
