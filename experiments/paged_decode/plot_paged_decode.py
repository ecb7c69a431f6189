#!/usr/bin/python3
"""paged_decode figure: flash_decode over a paged K/V cache, page size 1 ... 256 tokens, pages in
order or shuffled, against the contiguous cache (page_size 0, dashed): DRAM bytes read, L2
sectors looked up (lts__t_bytes / 32 B: the model's lts__t_bytes is sector-granular) and time.
The DRAM panel also draws what a kernel that loads whole pages would read (vLLM's
paged-attention kernel; closed form Σ ceil(len / page) · page tokens, not simulated), from the
sweep's kv_lengths drawn as attnsim draws them (SplitMix64).

    /usr/bin/python3 experiments/paged_decode/plot_paged_decode.py RESULTS.h5 OUT.{png,svg,pdf}
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

MASK = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def lengths_of(cfg):
    """Per-sequence KV lengths as core::sequence_kv_lengths draws them."""
    k, batch = cfg.get("kv_lengths"), int(cfg.get("batch", 1))
    if isinstance(k, list):
        return [int(x) for x in k]
    if isinstance(k, dict):
        lo, hi = (int(x) for x in k["uniform"])
        state, out = int(k.get("seed", 1)), []
        for _ in range(batch):
            state, x = splitmix64(state)
            out.append(lo + x % (hi - lo + 1))
        return out
    return [int(k if k is not None else cfg.get("seq_kv", cfg.get("seq", 1024)))] * batch


def main():
    res = ar.Results(sys.argv[1])
    ok = res.ok()
    page = res.col("page_size").astype(float)
    placement = np.array([str(p) for p in res.col("page_placement")])
    dram = res.col("dram__bytes_read.sum").astype(float) / 1e6
    sectors = res.col("lts__t_bytes.sum").astype(float) / 32 / 1e6
    t = res.col("gpu__time_duration.sum").astype(float) / 1e3
    row0 = int(np.flatnonzero(ok)[0])
    cfg = yaml.safe_load(res.config_text(row0))
    lengths = lengths_of(cfg)
    kv_heads = int(cfg.get("kv_heads", cfg.get("heads", 1)))
    token_bytes = kv_heads * int(cfg["head_dim"]) * 2 * {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}[cfg.get("dtype", "fp16")]
    contiguous = ok & (page == 0)
    pages = sorted(set(page[ok & (page > 0)]))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    panels = [(dram, "DRAM bytes read (MB)"), (sectors, "L2 sectors looked up (millions)"), (t, "time, split + combine (µs)")]
    for ax, (y, label) in zip(axes, panels):
        if contiguous.any():
            ax.axhline(y[contiguous][0], color="0.5", linestyle="--", linewidth=1.2, label="contiguous cache (page_size 0)")
        for i, pl in enumerate(["contiguous", "shuffled"]):
            sel = ok & (page > 0) & (placement == pl)
            order = np.argsort(page[sel])
            ax.plot(page[sel][order], y[sel][order], marker=ar.MARKERS[i], linestyle=ar.LINESTYLES[i], color=ar.GREYS[i],
                    markersize=6, linewidth=1.5, label=f"paged, pages {'in order' if pl == 'contiguous' else 'shuffled (seed 1)'}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(pages)
        ax.set_xticklabels([str(int(p)) for p in pages], fontsize=8)
        ax.set_xlabel("page size (tokens per page)")
        ax.set_ylabel(label)
        ax.grid(True, which="major", color="0.88", linewidth=0.6)
    whole = [sum(-(-n // int(p)) * int(p) for n in lengths) * token_bytes / 1e6 + (dram[contiguous][0] - sum(lengths) * token_bytes / 1e6)
             for p in pages] if contiguous.any() else []
    if whole:
        axes[0].plot(pages, whole, color="0.3", linestyle=":", marker="x", linewidth=1.2,
                     label="whole pages loaded (vLLM-style), closed form")
    lo = min(np.nanmin(dram[ok]), min(whole) if whole else np.inf)
    axes[0].set_ylim(lo * 0.98, max(np.nanmax(dram[ok]), max(whole) if whole else 0) * 1.02)
    for ax, y in zip(axes[1:], (sectors, t)):
        m = np.nanmean(y[ok])
        ax.set_ylim(min(np.nanmin(y[ok]), m * 0.95), max(np.nanmax(y[ok]), m * 1.05))
    handles, labels = axes[0].get_legend_handles_labels()
    leg = fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
    dev = ar.param(res, row0, "device")
    shape = (f"on {dev}: batch {len(lengths)}, {cfg['heads']} query heads over {kv_heads} KV heads, d = {cfg['head_dim']}, "
             f"{cfg.get('dtype', 'fp16')}, KV lengths {min(lengths)}…{max(lengths)} ({sum(lengths):,} tokens)")
    ar.suptitle(fig, "\n".join(x for x in (res.sweep_title(), "Paged-KV decoding " + shape) if x), fontsize=10)
    ar.layout_with_bottom_legend(fig, leg)
    ar.savefig(fig, sys.argv[2])
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
