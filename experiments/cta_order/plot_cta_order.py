#!/usr/bin/python3
"""cta_order figure: DRAM bytes (with the compulsory Q+K+V+O bytes marked), L2 hit rate and
time for row-major vs head-major CTA order, grouped by the number of heads.

    /usr/bin/python3 experiments/cta_order/plot_cta_order.py RESULTS.h5 OUT.{png,svg,pdf}
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402


def main():
    res = ar.Results(sys.argv[1])
    ok = res.ok()
    heads = sorted(set(int(h) for h in res.col("heads")[ok]))
    orders = list(dict.fromkeys(res.table["cta_order"][ok]))
    dram = ar.dram_bytes(res) / 1e6
    hit = res.col("lts__t_sector_hit_rate.pct").astype(float)
    t = res.col("gpu__time_duration.sum").astype(float) / 1e3
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    w = 0.8 / len(orders)
    for oi, o in enumerate(orders):
        vals = {name: [] for name in ("dram", "hit", "t")}
        for h in heads:
            r = np.flatnonzero(ok & (res.col("heads") == h) & (res.table["cta_order"] == o))
            r = int(r[0]) if r.size else None
            vals["dram"].append(dram[r] if r is not None else np.nan)
            vals["hit"].append(hit[r] if r is not None else np.nan)
            vals["t"].append(t[r] if r is not None else np.nan)
        xs = np.arange(len(heads)) + (oi - (len(orders) - 1) / 2) * w
        for ax, key in zip(axes, ("dram", "hit", "t")):
            bars = ax.bar(xs, vals[key], width=w, color="white", edgecolor="0.0", hatch=ar.HATCHES[oi], label=o)
            for b, v in zip(bars, vals[key]):
                ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.0f}" if key == "dram" else f"{v:.1f}" if key == "hit"
                        else f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    # Compulsory bytes: Q, K, V read once, O written once.
    r0 = int(np.flatnonzero(ok)[0])
    n = float(ar.param(res, r0, "seq_q"))
    d = float(ar.param(res, r0, "head_dim"))
    b = float(ar.param(res, r0, "batch") or 1)
    for i, h in enumerate(heads):
        comp = 4 * b * h * n * d * 2 / 1e6
        axes[0].plot([i - 0.45, i + 0.45], [comp] * 2, color="0.3", linestyle="--", linewidth=1.2,
                     label="compulsory Q+K+V+O" if i == 0 else None)
    titles = ("DRAM traffic (MB)", "L2 sector hit rate (%)", "simulated time (µs)")
    for ax, title in zip(axes, titles):
        ax.set_xticks(range(len(heads)))
        ax.set_xticklabels([f"{h} heads\n(K+V {2 * h * n * d * 2 / 2**20:.0f} MiB)" for h in heads], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(title)
        ax.grid(True, axis="y", color="0.88", linewidth=0.6)
        ax.margins(y=0.12)
    axes[1].set_ylim(0, 100)
    axes[0].legend(fontsize=8, loc="upper left")
    r0 = int(np.flatnonzero(ok)[0])
    n, d = ar.param(res, r0, "seq_q"), ar.param(res, r0, "head_dim")
    fig.suptitle(f"CTA rasterization order vs L2 reuse: flash2 forward on h200 (60 MiB L2), N = {n}, d = {d}",
                 fontsize=10)
    fig.tight_layout()
    ar.savefig(fig, sys.argv[2])
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
