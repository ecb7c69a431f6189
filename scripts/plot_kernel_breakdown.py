#!/usr/bin/python3
"""Per-kernel breakdown of HBM traffic and time: one stacked bar per point, one hatched
segment per launched kernel (e.g. standard attention's QK^T, softmax, PV and backward GEMMs).

    /usr/bin/python3 scripts/plot_kernel_breakdown.py RESULTS.h5 OUT.{png,svg,pdf}
        [--scale F] [--scale-label TEXT] [--reference LABEL=GB ...] [--title TEXT]

Left: DRAM bytes read + written per kernel (GB); right: gpu__time_duration.sum per kernel (ms).
--scale multiplies both (e.g. 4 to scale a batch-16 run to batch 64; say why in --scale-label).
--reference draws a labelled vertical line on the traffic panel (e.g. "published standard=40.3").
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


def short(name):
    for prefix in ("standard_", "flash1_", "flash2_", "flash_decode_"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--scale-label", default="")
    ap.add_argument("--reference", action="append", default=[])
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    rows = [r for r in range(res.rows) if res.ok()[r]]
    if not rows:
        raise SystemExit(f"{a.file}: no ok points")
    varying = res.varying_params()
    labels, bars = [], []
    for r in rows:
        # M (sram_bytes) sets only flash1's blocks (kernels/block_sizes.h): not shown for other kernels.
        uses = [k for k in varying
                if not (k == "sram_bytes" and res.has("kernel") and str(res.table["kernel"][r]) != "flash1")]
        labels.append("\n".join(f"{res.table[k][r]}" if k == "kernel" else ar.label_for(k, res.table[k][r])
                                for k in uses) or str(res.point_index(r)))
        ks = res.kernels(r)
        bars.append([(short(n), (m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)) * a.scale / 1e9,
                      m.get("gpu__time_duration.sum", 0) * a.scale / 1e6) for n, m in ks])
    names = list(dict.fromkeys(n for b in bars for n, _, _ in b))
    style = {n: (ar.HATCHES[i % len(ar.HATCHES)], ar.GREYS[(i + 2) % len(ar.GREYS)]) for i, n in enumerate(names)}

    fig, (ax_b, ax_t) = plt.subplots(1, 2, figsize=(12, 0.75 * len(rows) + 2.4), sharey=True)
    y = np.arange(len(rows))
    seen = set()
    for yi, b in enumerate(bars):
        left_b = left_t = 0.0
        for n, gb, ms in b:
            hatch, face = style[n]
            lab = n if n not in seen else None
            seen.add(n)
            for ax, left, w in ((ax_b, left_b, gb), (ax_t, left_t, ms)):
                ax.barh(yi, w, left=left, height=0.6, color="white", edgecolor="0.0", hatch=hatch, linewidth=0.8,
                        label=lab if ax is ax_b else None)
            left_b += gb
            left_t += ms
        ax_b.text(left_b, yi, f" {left_b:.2f} GB", va="center", fontsize=8)
        ax_t.text(left_t, yi, f" {left_t:.2f} ms", va="center", fontsize=8)
    for i, ref in enumerate(a.reference):
        lab, _, v = ref.rpartition("=")
        ax_b.axvline(float(v), color="0.3", linestyle=ar.LINESTYLES[(i + 1) % len(ar.LINESTYLES)], linewidth=1.0)
        ax_b.text(float(v), 0.99, f"{lab} {float(v):g} GB", rotation=90, fontsize=7, va="top", ha="right",
                  color="0.2", transform=ax_b.get_xaxis_transform(),
                  bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.8))
    ax_b.set_yticks(y)
    ax_b.set_yticklabels(labels, fontsize=8)
    ax_b.invert_yaxis()
    suffix = f" ({a.scale_label})" if a.scale_label else (f" (× {a.scale:g})" if a.scale != 1 else "")
    ax_b.set_xlabel("HBM traffic, read + write (GB)" + suffix)
    ax_t.set_xlabel("simulated time (ms)" + suffix)
    for ax in (ax_b, ax_t):
        ax.grid(True, axis="x", color="0.88", linewidth=0.6)
        ax.margins(x=0.18)
    leg = fig.legend(*ax_b.get_legend_handles_labels(), fontsize=7, loc="upper right", title="kernel",
                     title_fontsize=7)
    fig.suptitle(a.title or f"per-kernel breakdown, {os.path.basename(a.file)}", fontsize=10)
    ar.layout_with_right_legend(fig, leg)  # the legend beside the panels, inside the figure
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
