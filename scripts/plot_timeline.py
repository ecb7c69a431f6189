#!/usr/bin/python3
"""A run's timeline: bandwidth per memory level and active warps over time.

    /usr/bin/python3 scripts/plot_timeline.py RESULTS.h5 OUT.{png,svg,pdf}
        [--point I | --row R] [--title TEXT]

Reads /points/<i>/series (time_ns, *_gbps columns, active_warps_pct): the top panel draws
each bandwidth column (dram_gbps, lts_gbps, ...) in GB/s, with the device preset's peak as a
horizontal line when the device is known; the bottom panel draws active warps (% of the
maximum per SM). Kernel boundaries (per-kernel gpu__time_duration.sum) are marked. Default:
point 0 (the only point of `attnsim run --out`). Title: --title, else the sweep's name and
question (when the file comes from a sweep) over the point's kernel, device and swept values.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402

LEVEL_NAMES = {"dram_gbps": ("DRAM (HBM)", ("hbm", "bandwidth_gbps")), "lts_gbps": ("L2", ("l2", "bandwidth_gbps")),
               "l1_gbps": ("L1", None), "smem_gbps": ("shared memory", None)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--point", type=int, help="point index (/points/<i>)")
    g.add_argument("--row", type=int, help="table row")
    ap.add_argument("--smooth", type=int, default=None,
                    help="moving average over this many samples (default: about 1/150 of the run; 1 = raw)")
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    if a.row is not None:
        row = a.row
    elif a.point is not None:
        idx = [res.point_index(r) for r in range(res.rows)]
        if a.point not in idx:
            raise SystemExit(f"{a.file}: no point {a.point}")
        row = idx.index(a.point)
    else:
        ok = np.flatnonzero(res.ok())
        if ok.size == 0:
            raise SystemExit(f"{a.file}: no ok point")
        row = int(ok[0])
    period, s = res.series(row)
    if not s or "time_ns" not in s:
        raise SystemExit(f"{a.file}: point {res.point_index(row)} has no series/time_ns")
    t_us = np.asarray(s["time_ns"], dtype=float) / 1e3

    spec = None
    dev = ar.param(res, row, "device")
    if dev:
        try:
            spec = ar.load_device(str(dev))
        except (OSError, ImportError):
            spec = None

    fig, (ax_bw, ax_w) = plt.subplots(2, 1, figsize=(9, 5.8), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    k = a.smooth if a.smooth else max(1, len(t_us) // 150)

    def smooth(v):
        v = np.asarray(v, dtype=float)
        if k <= 1 or v.size < k:
            return v
        return np.convolve(np.nan_to_num(v), np.ones(k) / k, mode="same")

    bw_cols = [c for c in s if c.endswith("_gbps")]
    bw_cols.sort(key=lambda c: list(LEVEL_NAMES).index(c) if c in LEVEL_NAMES else 99)
    for i, c in reversed(list(enumerate(bw_cols))):
        name, peak_key = LEVEL_NAMES.get(c, (c, None))
        ax_bw.plot(t_us, smooth(s[c]), linestyle=ar.LINESTYLES[i % len(ar.LINESTYLES)], color=ar.GREYS[i % len(ar.GREYS)],
                   linewidth=1.5, marker=ar.MARKERS[i % len(ar.MARKERS)], markevery=max(1, len(t_us) // 12),
                   markersize=5, label=name)
        if spec and peak_key:
            peak = spec.get(peak_key[0], {}).get(peak_key[1])
            if peak and float(spec.get(peak_key[0], {}).get("capacity_bytes", 1) or 0) > 0:
                ax_bw.axhline(float(peak), color=ar.GREYS[i % len(ar.GREYS)], linewidth=0.8,
                              linestyle=ar.LINESTYLES[i % len(ar.LINESTYLES)], alpha=0.6)
                ax_bw.text(t_us[-1], float(peak), f" {name} peak {float(peak):.0f} GB/s", fontsize=7, va="bottom",
                           ha="right", color="0.3")
    ax_bw.set_ylabel("bandwidth (GB/s)" + (f"\nmoving average of {k} samples" if k > 1 else ""))
    ax_bw.set_ylim(bottom=0)
    ax_bw.legend(fontsize=8, loc="upper left")
    ax_bw.grid(True, color="0.88", linewidth=0.6)

    if "active_warps_pct" in s:
        ax_w.fill_between(t_us, s["active_warps_pct"], step="mid", facecolor="0.85", edgecolor="0.2", hatch="//",
                          linewidth=0.8, label="active warps")
    ax_w.set_ylim(0, 100)
    ax_w.set_ylabel("active warps\n(% of max per SM)")
    ax_w.set_xlabel("simulated time (µs)" + (f"; sampled every {period:.0f} ns" if period and np.isfinite(period) else ""))
    ax_w.grid(True, color="0.88", linewidth=0.6)

    # Kernel boundaries.
    edge = 0.0
    kernels = res.kernels(row)
    for name, m in kernels:
        dur = m.get("gpu__time_duration.sum", 0.0) / 1e3
        for ax in (ax_bw, ax_w):
            ax.axvline(edge, color="0.5", linewidth=0.7, linestyle=":")
        ax_w.text(edge + dur / 2, 96, name, ha="center", va="top", fontsize=7, color="0.2")
        edge += dur
    if kernels:
        for ax in (ax_bw, ax_w):
            ax.axvline(edge, color="0.5", linewidth=0.7, linestyle=":")

    params = ", ".join(ar.label_for(k, res.table[k][row]) for k in res.varying_params())
    kname = ar.param(res, row, "kernel")
    point = f"timeline of point {res.point_index(row)}: {kname} on {dev}" + (f", {params}" if params else "")
    ar.suptitle(fig, a.title or "\n".join(t for t in (res.sweep_title(), point) if t), fontsize=10)
    fig.tight_layout()
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
