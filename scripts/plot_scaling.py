#!/usr/bin/python3
"""Standard vs tiled attention HBM traffic vs sequence length, log-log (FlashAttention Theorem 2).

    /usr/bin/python3 scripts/plot_scaling.py RESULTS.h5 OUT.{png,svg,pdf}
        [--x seq_q] [--group kernel] [--split device.l2.capacity_bytes] [--sram-bytes M]
        [--title TEXT]

One line per kernel (the --group column); one panel per value of --split (default: the
L2-capacity column if the sweep varies it). Reference slopes, drawn as absolute counts
× batch × heads × bytes per value:
  N^2        — the score matrix written once (standard attention's Θ(N^2) term),
  N^2 d^2/M  — FlashAttention's Θ(N^2 d^2 / M) term, M = on-chip SRAM in elements
               (--sram-bytes, else the point's sram_bytes, else flash1's default: the
               preset's on-chip SRAM per SM, sm.l1_shared_total_bytes, or the scratchpad's
               SRAM per core; flash1 falls back to a smaller M only when its tiles would not
               fit a block, see docs/kernels.md) / bytes per value.
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

BYTES_PER_VALUE = {"fp16": 2, "bf16": 2, "fp32": 4, "fp8": 1}


def sram_elements(res, row, override, bpv):
    if override:
        return override / bpv
    sb = ar.param(res, row, "sram_bytes")
    try:
        if sb is not None and float(sb) > 0:
            return float(sb) / bpv
    except (TypeError, ValueError):
        pass
    dev = ar.param(res, row, "device")
    try:
        spec = ar.load_device(str(dev))
        sm = spec.get("sm", {})
        if spec.get("kind") == "scratchpad":
            m = spec.get("scratchpad", {}).get("sram_bytes_per_core")
        else:
            m = sm.get("l1_shared_total_bytes") or sm.get("shared_mem_per_sm_bytes")
        return float(m) / bpv if m else None
    except (OSError, ImportError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--x", default=None, help="sequence-length column (default seq_q, or seq)")
    ap.add_argument("--group", default="kernel")
    ap.add_argument("--split", default=None, help="one panel per value of this column")
    ap.add_argument("--sram-bytes", type=float, default=None)
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    x_key = a.x or next((k for k in ("seq_q", "seq", "seq_kv") if res.has(k)), None)
    if x_key is None:
        raise SystemExit(f"{a.file}: no sequence-length column (seq_q / seq) in /table")
    split_key = a.split
    if split_key is None and "device.l2.capacity_bytes" in res.varying_params():
        split_key = "device.l2.capacity_bytes"
    ok = res.ok()
    x = res.col(x_key).astype(float)
    dram = ar.dram_bytes(res)
    groups = list(dict.fromkeys(res.table[a.group][ok])) if res.has(a.group) else [None]
    splits = list(dict.fromkeys(res.table[split_key][ok])) if split_key and res.has(split_key) else [None]

    # Bytes in MB or GB (decimal), whichever keeps the largest value readable.
    peak = np.nanmax(dram[ok]) if ok.any() else 0
    unit, scale = ("GB", 1e9) if peak >= 1e9 else ("MB", 1e6)
    fig, axes = plt.subplots(1, len(splits), figsize=(5.6 * len(splits), 4.6), squeeze=False)
    for si, sv in enumerate(splits):
        ax = axes[0][si]
        in_split = ok & ((res.table[split_key] == sv) if sv is not None else True)
        last = {}  # group -> (largest N, its bytes): where the reference slopes are anchored
        for gi, g in enumerate(groups):
            sel = in_split & ((res.table[a.group] == g) if g is not None else True)
            if not sel.any():
                continue
            order = np.argsort(x[sel])
            xs_, ys_ = x[sel][order], dram[sel][order]
            slope = ""
            if xs_.size >= 2 and ys_[-2] > 0 and xs_[-1] > xs_[-2]:
                slope = f", slope {np.log(ys_[-1] / ys_[-2]) / np.log(xs_[-1] / xs_[-2]):.2f} at the largest N"
            last[g] = (xs_[-1], ys_[-1])
            ax.plot(xs_, ys_ / scale, marker=ar.MARKERS[gi % len(ar.MARKERS)],
                    linestyle=ar.LINESTYLES[gi % len(ar.LINESTYLES)], color=ar.GREYS[gi % len(ar.GREYS)],
                    markersize=7, linewidth=1.8, label=(f"{g} (simulated" if g is not None else "(simulated") + slope + ")")
        # Reference slopes from the first ok row's shape.
        rows = np.flatnonzero(in_split)
        if rows.size:
            r0 = int(rows[0])
            bpv = BYTES_PER_VALUE.get(str(ar.param(res, r0, "dtype") or "fp16"), 2)
            d = float(ar.param(res, r0, "head_dim") or 64)
            bh = float(ar.param(res, r0, "batch") or 1) * float(ar.param(res, r0, "heads") or 1)
            ns = np.array(sorted(set(x[in_split])))
            # Reference slopes drawn through the data (at the largest N of the kernel they describe),
            # so their slope can be compared with the points': N^2 through standard attention's,
            # N^2 d^2 / M (Theorem 2's order) through flash1's; else through the first group's.
            first = next(iter(last.values()), None)
            n0, y0 = last.get("standard", first) if first else (None, None)
            if n0:
                ax.plot(ns, y0 * (ns / n0) ** 2 / scale, linestyle=(0, (1, 1.5)), color="0.3", linewidth=1.2,
                        label=rf"$\propto N^2$ (score matrix; slope 2: ×4 per ×2 in N), through {'standard' if 'standard' in last else 'the data'}")
            m = sram_elements(res, r0, a.sram_bytes, bpv)
            if m and "flash1" in last:
                n1, y1 = last["flash1"]
                ax.plot(ns, y1 * (ns / n1) ** 2 / scale, linestyle=(0, (6, 2)), color="0.55", linewidth=1.2,
                        label=rf"$\propto N^2d^2/M$ (Theorem 2; d={d:.0f}, M={m:.0f} elements), through flash1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sorted(set(x[in_split])))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel(f"sequence length N ({x_key}, tokens)")
        ax.set_ylabel(f"HBM traffic, read + write ({unit})")
        ax.grid(True, which="major", color="0.85", linewidth=0.6)
        ax.set_title(ar.label_for(split_key, sv) if sv is not None else "HBM traffic vs N")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))  # below the x label: clear of the data
    fig.suptitle(a.title or res.sweep_title() or f"standard vs tiled attention, {os.path.basename(a.file)}", fontsize=11)
    fig.tight_layout()
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
