#!/usr/bin/python3
"""split_kv figure: decode time vs KV length (batch x seq_kv fixed), one line per num_splits,
one panel per kv_heads setting, with the published Flash-Decoding band (56-78 us) and the
published one-CTA-per-(batch, head) range (~0.35 -> 2.3 ms) marked when the sweep holds the
published 65,536 tokens of KV cache (not the quick variant's 16,384). Title: the sweep's name and
question over the shape.

    /usr/bin/python3 experiments/split_kv/plot_split_kv.py RESULTS.h5 OUT.{png,svg,pdf}
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
    kvs = list(dict.fromkeys(int(v) for v in res.col("kv_heads")[ok]))
    splits = sorted(set(int(v) for v in res.col("num_splits")[ok]))
    seq = res.col("seq_kv").astype(float)
    batch = res.col("batch").astype(float)
    t = res.col("gpu__time_duration.sum").astype(float) / 1e3
    tokens = sorted(set((batch * seq)[ok].astype(int)))
    published = tokens == [65536]  # the published setting; the quick variant's references would mislead
    fig, axes = plt.subplots(1, len(kvs), figsize=(6 * len(kvs), 5.2), sharey=True, squeeze=False)
    for ki, kv in enumerate(kvs):
        ax = axes[0][ki]
        if published:
            ax.axhspan(56, 78, facecolor="0.85", hatch="..", edgecolor="0.6", linewidth=0,
                       label="published Flash-Decoding, A100: 56–78 µs")
            ax.axhline(350, color="0.4", linestyle=":", linewidth=1)
            ax.axhline(2300, color="0.4", linestyle=":", linewidth=1)
            ax.text(seq[ok].min(), 350, " published one-CTA kernel ~0.35 ms (large batch)", fontsize=7, va="bottom")
            ax.text(seq[ok].min(), 2300, " published one-CTA kernel 2.3 ms (batch 1)", fontsize=7, va="bottom")
        for si, s in enumerate(splits):
            sel = ok & (res.col("kv_heads") == kv) & (res.col("num_splits") == s)
            order = np.argsort(seq[sel])
            ax.plot(seq[sel][order], t[sel][order], marker=ar.MARKERS[si], linestyle=ar.LINESTYLES[si],
                    color=ar.GREYS[si], markersize=7, linewidth=1.6,
                    label="num_splits = 1 (one CTA per (batch, head))" if s == 1 else f"num_splits = {s}")
        xs = sorted(set(seq[ok]))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{int(x)}\n(batch {int(batch[ok & (seq == x)][0])})" for x in xs], fontsize=8)
        ax.set_xlabel("KV length seq_kv, tokens" + (f" (batch × seq_kv = {tokens[0]:,} tokens)" if len(tokens) == 1 else ""))
        ax.set_title(f"kv_heads = {kv}" + (" (GQA, 8 query heads per KV head)" if kv < 16 else " (no GQA)"),
                     fontsize=10)
        ax.grid(True, which="major", color="0.88", linewidth=0.6)
    axes[0][0].set_ylabel("simulated time, split + combine (µs)")
    leg = fig.legend(*axes[0][0].get_legend_handles_labels(), fontsize=8, loc="lower center",
                     ncol=4 if published else 3)
    dev = ar.param(res, int(np.flatnonzero(ok)[0]), "device")
    shape = f"on {dev}: 16 query heads, d = 128, fp16, one query token" + ("" if published else
                                                                            " (published references omitted)")
    ar.suptitle(fig, "\n".join(t for t in (res.sweep_title(), "Split-KV decoding " + shape) if t), fontsize=10)
    ar.layout_with_bottom_legend(fig, leg)
    ar.savefig(fig, sys.argv[2])
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
