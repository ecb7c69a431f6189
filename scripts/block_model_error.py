#!/usr/bin/python3
"""Error of the block model (device key l2.tracking_bytes) against the line-level model.

Runs the reference workloads of issue 7 (attnsim run --json) and, with --validation, every
kernel of experiments/h200_validation/sweep.yaml (attnsim sweep), once with the line model and
once per tracking size, and prints per workload and per kernel the relative difference of kernel
time, DRAM read/write bytes and L2 bytes, the CPU time of each run, and the worst and median
absolute difference per metric. Usage:

  /usr/bin/python3 scripts/block_model_error.py [--attnsim BIN] [--tracking 1024,2048] [--validation] [--quick]

--quick runs only the small workloads (a few seconds); the default set takes minutes (the
line-level standard attention at N=8192 alone takes ~40 s). docs/performance.md holds the output.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attnsim_results import Results, attnsim_binary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METRICS = [("time", "gpu__time_duration.sum"), ("dram rd", "dram__bytes_read.sum"),
           ("dram wr", "dram__bytes_write.sum"), ("L2 B", "lts__t_bytes.sum")]

WORKLOADS = [  # (label, device, kernel, sets, quick)
    ("stream_read 4 GiB 264x16 KiB", "h200", "stream_read",
     ["programs=264", "bytes_per_step=16384", "total_bytes=4294967296"], False),
    ("stream_read 256 MiB 33x4 KiB", "h200", "stream_read",
     ["programs=33", "bytes_per_step=4096", "total_bytes=268435456"], True),
    ("flash2 fwd B1 H32 N8192 d128 128x64", "h200", "flash2",
     ["heads=32", "seq=8192", "head_dim=128", "block_m=128", "block_n=64"], False),
    ("flash2 fwd B1 H4 N4096 d128 causal", "h200", "flash2",
     ["heads=4", "seq=4096", "head_dim=128", "block_m=128", "block_n=64", "causal=true"], True),
    ("flash2 fwd B1 H1 N131072 d128", "h200", "flash2",
     ["heads=1", "seq=131072", "head_dim=128", "block_m=128", "block_n=64"], False),
    ("flash2 fwdbwd B2 H8 N2048 d64", "h200", "flash2",
     ["batch=2", "heads=8", "seq=2048", "head_dim=64", "pass=fwdbwd"], True),
    ("standard fwd B1 H32 N8192 d128", "h200", "standard", ["heads=32", "seq=8192", "head_dim=128"], False),
    ("standard fwd B1 H8 N2048 d80", "h200", "standard", ["heads=8", "seq=2048", "head_dim=80"], True),
    ("flash_decode B8 H32 N16384 d128", "h200", "flash_decode",
     ["batch=8", "heads=32", "seq_q=1", "seq_kv=16384", "head_dim=128"], True),
    ("flash2 fwd B4 H16 N1024 d64 a100", "a100-40gb", "flash2", ["batch=4", "heads=16", "seq=1024", "head_dim=64"], True),
]


def cpu_of_child(before):
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def run_json(binary, device, kernel, sets, tracking):
    args = [binary, "run", "--device", device, "--kernel", kernel, "--json", "--max-memory", "0"]
    for s in sets + [f"device.l2.tracking_bytes={tracking}"]:
        args += ["--set", s]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    cpu = cpu_of_child(before)
    kernels = json.loads(out)["kernels"]
    return [(k["name"], k["metrics"]) for k in kernels], cpu


def run_sweep(binary, tracking, tmp):
    src = open(os.path.join(ROOT, "experiments/h200_validation/sweep.yaml")).read()
    key = "set:\n"
    assert key in src, "h200_validation/sweep.yaml has no set: block"
    text = src.replace(key, key + f"  device.l2.tracking_bytes: {tracking}\n", 1)
    path = os.path.join(tmp, f"validation_{tracking}.yaml")
    open(path, "w").write(text)
    out = os.path.join(tmp, f"validation_{tracking}.h5")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "sweep", path, "--out", out, "-j", "1"], check=True,
                   capture_output=True, text=True)
    cpu = cpu_of_child(before)
    res = Results(out)
    kernels = []
    for row in range(res.rows):
        label = ",".join(f"{k}={res.table[k][row]}" for k in ("kernel", "heads", "seq_kv", "head_dim", "batch")
                         if k in res.table)
        kernels += [(f"{label}/{name}", m) for name, m in res.kernels(row)]
    res.close()
    return kernels, cpu


def rel(a, b):
    return (b / a - 1.0) if a else (0.0 if b == 0 else float("inf"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnsim", default=None)
    ap.add_argument("--tracking", default="2048")
    ap.add_argument("--validation", action="store_true")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    binary = a.attnsim or attnsim_binary()
    sizes = [int(x) for x in a.tracking.split(",")]
    rows = []  # (label, tracking, {metric: rel}, cpu_line, cpu_block)
    for label, device, kernel, sets, quick in WORKLOADS:
        if a.quick and not quick:
            continue
        line, cpu_line = run_json(binary, device, kernel, sets, 0)
        for t in sizes:
            block, cpu_block = run_json(binary, device, kernel, sets, t)
            tot = {n: (sum(m[k] for _, m in line), sum(m[k] for _, m in block)) for n, k in METRICS}
            rows.append((label, t, {n: rel(*tot[n]) for n in tot}, cpu_line, cpu_block))
        print(f"done: {label}", file=sys.stderr)
    if a.validation:
        with tempfile.TemporaryDirectory() as tmp:
            line, cpu_line = run_sweep(binary, 0, tmp)
            for t in sizes:
                block, cpu_block = run_sweep(binary, t, tmp)
                for (name, ml), (_, mb) in zip(line, block):
                    rows.append((f"h200_validation {name}", t, {n: rel(ml[k], mb[k]) for n, k in METRICS}, None, None))
                rows.append(("h200_validation sweep (27 kernels, CPU)", t, {}, cpu_line, cpu_block))
    print("| workload | tracking B | " + " | ".join(n for n, _ in METRICS) + " | CPU s line | CPU s block | speed-up |")
    print("|---|---:|" + "---:|" * (len(METRICS) + 3))
    for label, t, r, cl, cb in rows:
        cells = [f"{100 * r[n]:+.2f} %" if n in r else "" for n, _ in METRICS]
        cpu = [f"{cl:.2f}" if cl is not None else "", f"{cb:.2f}" if cb is not None else "",
               f"{cl / cb:.1f}x" if cl and cb else ""]
        print(f"| {label} | {t} | " + " | ".join(cells + cpu) + " |")
    for t in sizes:
        print(f"\ntracking_bytes {t}: median / worst |difference| over {sum(1 for x in rows if x[1] == t and x[2])} rows")
        for n, _ in METRICS:
            v = [abs(r[n]) for _, tt, r, _, _ in rows if tt == t and n in r]
            if v:
                print(f"  {n}: median {100 * statistics.median(v):.2f} %, worst {100 * max(v):.2f} %")


if __name__ == "__main__":
    main()
