#!/usr/bin/python3
"""sram_size figure: HBM traffic of FlashAttention-1 vs on-chip SRAM size M (elements), one
panel per head dim, with the two orders of Saha & Ye's bound drawn with constant 1 —
N^2 d^2 / M (FlashAttention's tiling) and N^2 d / sqrt(M) (blocked matmul) — which cross at
M = d^2, and the closed form of `attnsim formulas --sram-bytes` when $ATTNSIM is available.
M ticks read elements and KiB; bytes in MB or GB and time in µs or ms by their size; the
title is the sweep's name and question.

    /usr/bin/python3 experiments/sram_size/plot_sram_size.py RESULTS.h5 OUT.{png,svg,pdf}
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402

BPV = 2  # fp16


def main():
    res = ar.Results(sys.argv[1])
    ok = res.ok()
    ds = sorted(set(int(v) for v in res.col("head_dim")[ok]))
    sb = res.col("sram_bytes").astype(float)
    dram = ar.dram_bytes(res)
    t_ns = res.col("gpu__time_duration.sum").astype(float)
    t_unit, t_scale = ar.time_unit(t_ns[ok])
    t = t_ns / t_scale
    b_unit, b_scale = ar.byte_unit(dram[ok])
    ticks = sorted(set(sb[ok] / BPV))

    def m_axis(ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{m:.0f}\n{m * BPV / 1024:g} KiB" for m in ticks], fontsize=7)
        ax.minorticks_off()
    r0 = int(np.flatnonzero(ok)[0])
    n = float(ar.param(res, r0, "seq_q"))
    bh = float(ar.param(res, r0, "batch") or 1) * float(ar.param(res, r0, "heads") or 1)
    fig, axes = plt.subplots(1, len(ds) + 1, figsize=(5.6 * (len(ds) + 1), 5.0), squeeze=False)
    for di, d in enumerate(ds):
        ax = axes[0][di]
        sel = ok & (res.col("head_dim") == d)
        order = np.argsort(sb[sel])
        m = sb[sel][order] / BPV
        ax.plot(m, dram[sel][order] / b_scale, marker="o", color="0.0", linewidth=1.8, markersize=7,
                label=r"flash1 simulated (Algorithm 1: $B_c = \lceil M/4d \rceil$, $B_r = \min(B_c, d)$)")
        cf = []
        for s in sb[sel][order]:
            j = ar.attnsim_json(["formulas", "--seq", str(int(n)), "--tile", "64", "--head-dim", str(d),
                                 "--heads", str(int(bh)), "--sram-bytes", str(int(s))])
            cf.append(j["flash1"]["total"] / b_scale if j and "flash1" in j else np.nan)
        if np.isfinite(cf).any():
            ax.plot(m, cf, linestyle="none", marker="x", markersize=9, color="0.3", label="closed form (attnsim formulas)")
        mm = np.logspace(np.log10(m.min()), np.log10(m.max()), 100)
        ax.plot(mm, n * n * d * d / mm * BPV * bh / b_scale, linestyle="--", color="0.45",
                label=r"$N^2d^2/M$ (tiling order, constant 1)")
        ax.plot(mm, n * n * d / np.sqrt(mm) * BPV * bh / b_scale, linestyle=":", color="0.2", linewidth=1.6,
                label=r"$N^2d/\sqrt{M}$ (blocked matmul, constant 1)")
        ax.axvline(d * d, color="0.6", linewidth=1)
        ax.text(d * d, 0.97, f" M = d² = {d * d} elements\n ({d * d * BPV // 1024} KiB fp16)", fontsize=7.5,
                va="top", transform=ax.get_xaxis_transform())
        m_axis(ax)
        ax.set_yscale("log")
        ax.set_xlabel("on-chip SRAM M (fp16 elements, KiB)")
        ax.set_ylabel(f"HBM traffic, read + write ({b_unit})")
        ax.set_title(f"d = {d}, N = {int(n)}, {int(bh)} heads", fontsize=10)
        ax.grid(True, which="major", color="0.88", linewidth=0.6)
        ax.legend(fontsize=7, loc="lower left")
    ax = axes[0][-1]
    for di, d in enumerate(ds):
        sel = ok & (res.col("head_dim") == d)
        order = np.argsort(sb[sel])
        ax.plot(sb[sel][order] / BPV, t[sel][order], marker=ar.MARKERS[di], linestyle=ar.LINESTYLES[di],
                color=ar.GREYS[di], linewidth=1.6, markersize=7, label=f"d = {d}")
        ax.axvline(d * d, color=ar.GREYS[di], linewidth=0.8, linestyle=ar.LINESTYLES[di])
    m_axis(ax)
    ax.set_yscale("log")
    ax.set_xlabel("on-chip SRAM M (fp16 elements, KiB); vertical lines at M = d²")
    ax.set_ylabel(f"simulated time ({t_unit})")
    ax.set_title("time", fontsize=10)
    ax.grid(True, which="major", color="0.88", linewidth=0.6)
    ax.legend(fontsize=8)
    dev = ar.param(res, r0, "device")
    ar.suptitle(fig, "\n".join(t for t in (res.sweep_title(), f"FlashAttention-1 on {dev} vs the Saha–Ye orders")
                                if t), fontsize=10)
    fig.tight_layout()
    ar.savefig(fig, sys.argv[2])
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
