#!/usr/bin/python3
"""triton_tiles figure: simulated forward TFLOP/s (4·B·H·N²·d / time) of every Triton configuration
of the sweep, one bar each, grouped by tile (block_m × block_n), one bar per (warps, stages); the
bar's label gives the CTAs per SM and the resource that limits them.

    /usr/bin/python3 experiments/triton_tiles/plot_triton_tiles.py RESULTS.h5 OUT.png
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: plot_triton_tiles.py RESULTS.h5 OUT.png")
    res = ar.Results(argv[0])
    ok = np.flatnonzero(res.ok())
    if ok.size == 0:
        raise SystemExit(f"{argv[0]}: no ok points")
    col = {k: res.col(k) for k in ("block_m", "block_n", "warps", "stages")}
    t = res.col("gpu__time_duration.sum").astype(float)
    # CTAs per SM: the smallest of the per-resource limits.
    limits = {k: res.col("launch__occupancy_limit_" + k) for k in ("registers", "shared_mem", "warps", "blocks")}
    tiles = sorted({(int(col["block_m"][i]), int(col["block_n"][i])) for i in ok})
    variants = sorted({(int(col["warps"][i]), int(col["stages"][i])) for i in ok})
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(tiles) + 2), 4.8))
    width = 0.8 / len(variants)
    for v, (warps, stages) in enumerate(variants):
        xs, ys, labels = [], [], []
        for x, (bm, bn) in enumerate(tiles):
            rows = [i for i in ok if (int(col["block_m"][i]), int(col["block_n"][i]), int(col["warps"][i]),
                                      int(col["stages"][i])) == (bm, bn, warps, stages)]
            if not rows:
                continue
            i = rows[0]
            w = yaml.safe_load(res.config_text(i))  # the point's resolved workload
            flops = 4.0 * w["batch"] * w["heads"] * w["seq_q"] * w["seq_kv"] * w["head_dim"]
            xs.append(x - 0.4 + (v + 0.5) * width)
            ys.append(flops / (t[i] * 1e-9) / 1e12)
            per_sm = int(min(limits[k][i] for k in limits))
            limit = min(limits, key=lambda k: limits[k][i])
            labels.append(f"{per_sm} {limit[0]}")
        bars = ax.bar(xs, ys, width, color=ar.GREYS[v % len(ar.GREYS)], edgecolor="black", linewidth=0.5,
                      hatch=ar.HATCHES[v % len(ar.HATCHES)], label=f"{warps} warps, {stages} stages")
        for b, text in zip(bars, labels):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), text, ha="center", va="bottom", fontsize=6,
                    rotation=90)
    ax.set_xticks(range(len(tiles)))
    ax.set_xticklabels([f"{bm}×{bn}" for bm, bn in tiles])
    ax.set_xlabel("tile (block_m × block_n); bar label: CTAs per SM and the limiting resource (r, s, w, b)")
    ax.set_ylabel("simulated TFLOP/s (4·B·H·N²·d / time)")
    ax.set_title(res.sweep_title(), fontsize=9)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    fig.tight_layout()
    ar.savefig(fig, argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
