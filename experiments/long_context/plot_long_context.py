#!/usr/bin/python3
"""long_context figure: simulated kernel time, DRAM bytes and L2 (lts) bytes against the sequence
length, log-log, with N and N² reference lines; with --timing CSV (timing.sh: seq, cpu_s, max_rss_kib)
a fourth panel shows the CPU seconds each point took to simulate.

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
    n = res.col("seq").astype(float)[ok]
    order = np.argsort(n)
    n = n[order]
    time_ms = (res.col("gpu__time_duration.sum").astype(float) / 1e6)[ok][order]
    dram = ((res.col("dram__bytes_read.sum") + res.col("dram__bytes_write.sum")).astype(float) / 1e9)[ok][order]
    lts = (res.col("lts__t_bytes.sum").astype(float) / 1e9)[ok][order]
    # Reference slopes: time and L2 traffic grow as N² (every query block reads all of K and V);
    # DRAM as N while one wave's K/V fit the L2 (compulsory bytes), as N² once they do not.
    panels = [("kernel time (ms)", time_ms, 2), ("DRAM bytes (GB)", dram, 1), ("L2 bytes, lts__t_bytes (GB)", lts, 2)]
    timing = None
    if a.timing and os.path.exists(a.timing):
        with open(a.timing) as f:
            rows = list(csv.DictReader(f))
        timing = (np.array([float(r["seq"]) for r in rows]), np.array([float(r["cpu_s"]) for r in rows]))
    fig, axes = plt.subplots(1, len(panels) + (timing is not None), figsize=(4.2 * (len(panels) + (timing is not None)), 4.2))
    for ax, (label, y, slope) in zip(axes, panels):
        ax.loglog(n, y, "o-", label="sampled simulation")
        if len(n) and y[0] > 0:
            ax.loglog(n, y[0] * (n / n[0]) ** slope, ":", color="0.5", label="∝ N²" if slope == 2 else "∝ N")
        ax.set_xlabel("sequence length N (tokens)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    if timing is not None:
        ax = axes[-1]
        ax.loglog(timing[0], timing[1], "s-", color="C3")
        ax.set_xlabel("sequence length N (tokens)")
        ax.set_ylabel("CPU seconds to simulate")
        ax.grid(True, which="both", alpha=0.3)
    ar.suptitle(fig, "flash2 forward on h200 (batch 1, fp16, d = 128), sim.mode: sampled: time and bytes vs N")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    ar.savefig(fig, a.out)


if __name__ == "__main__":
    main()
