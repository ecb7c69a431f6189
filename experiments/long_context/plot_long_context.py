#!/usr/bin/python3
"""long_context figure: simulated kernel time, DRAM bytes and L2 (lts) bytes against the sequence
length, one line per kernel (flash2, flash3), log-log, with N and N² reference lines; with --timing
CSV (timing.sh: kernel, seq, cpu_s, max_rss_kib) a fourth panel shows the CPU seconds each point
took to simulate.

    /usr/bin/python3 experiments/long_context/plot_long_context.py RESULTS.h5 OUT.png [--timing CSV]
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("h5")
    ap.add_argument("out")
    ap.add_argument("--timing")
    a = ap.parse_args()
    res = ar.Results(a.h5)
    ok = res.ok()
    rows = [r for r in range(len(ok)) if ok[r]]
    kernels = sorted({str(ar.param(res, r, "kernel")) for r in rows})
    seq = res.col("seq").astype(float)
    cols = {
        "time": res.col("gpu__time_duration.sum").astype(float) / 1e6,
        "dram": (res.col("dram__bytes_read.sum") + res.col("dram__bytes_write.sum")).astype(float) / 1e9,
        "lts": res.col("lts__t_bytes.sum").astype(float) / 1e9,
    }
    # Reference slopes: time and L2 traffic grow as N² (every query block reads all of K and V);
    # DRAM as N while one wave's K/V fit the L2 (compulsory bytes), as N² once they do not.
    panels = [("kernel time (ms)", "time", 2), ("DRAM bytes (GB)", "dram", 1), ("L2 bytes, lts__t_bytes (GB)", "lts", 2)]
    timing = {}
    if a.timing and os.path.exists(a.timing):
        with open(a.timing) as f:
            for t in csv.DictReader(f):
                timing.setdefault(t.get("kernel", "flash2"), []).append((float(t["seq"]), float(t["cpu_s"])))
    n_panels = len(panels) + bool(timing)
    fig, axes = plt.subplots(1, n_panels, figsize=(4.2 * n_panels, 4.2))
    for ax, (label, key, slope) in zip(axes, panels):
        for k, kernel in enumerate(kernels):
            rk = sorted((r for r in rows if str(ar.param(res, r, "kernel")) == kernel), key=lambda r: seq[r])
            n = np.array([seq[r] for r in rk])
            y = np.array([cols[key][r] for r in rk])
            ax.loglog(n, y, "o-", color=f"C{k}", label=f"{kernel} (sampled)")
            if k == 0 and len(n) and y[0] > 0:
                ax.loglog(n, y[0] * (n / n[0]) ** slope, ":", color="0.5", label="∝ N²" if slope == 2 else "∝ N")
        ax.set_xlabel("sequence length N (tokens)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    if timing:
        ax = axes[-1]
        for k, kernel in enumerate(kernels):
            pts = sorted(timing.get(kernel, []))
            if pts:
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], "s-", color=f"C{k}", label=kernel)
        ax.set_xlabel("sequence length N (tokens)")
        ax.set_ylabel("CPU seconds to simulate")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    ar.suptitle(fig, f"{' and '.join(kernels)} forward on h200 (batch 1, fp16, d = 128), sim.mode: sampled: time and bytes vs N")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    ar.savefig(fig, a.out)


if __name__ == "__main__":
    main()
