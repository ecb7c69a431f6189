#!/usr/bin/python3
"""Roofline: arithmetic intensity vs attainable throughput, per memory level (DRAM, L2).

    /usr/bin/python3 scripts/plot_roofline.py RESULTS.h5 OUT.{png,svg,pdf}
        [--device NAME|FILE.yaml] [--label kernel] [--annotate COL[,COL...]|none] [--title TEXT]

Each ok point is placed twice: at its DRAM intensity (attnsim__flops / DRAM bytes read +
written) and at its L2 intensity (attnsim__flops / lts__t_bytes.sum), both at its achieved
throughput attnsim__flops / gpu__time_duration.sum. Roofs come from the device preset
(configs/devices/<device>.yaml, or the 'device' column): compute peak = tensor_flops_per_cycle
× SM count × tensor clock (sm.tensor_clock_ghz, else clock_ghz); DRAM and L2 slopes = hbm.bandwidth_gbps and l2.bandwidth_gbps. Each point at
its DRAM intensity is labelled with the swept parameters that vary (except --label): N = seq, "L2 off"
for device.l2.capacity_bytes = 0, key=value otherwise; a point whose label would overlap an earlier
one stays unlabelled.
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


def peaks(spec):
    sm = spec.get("sm", {})
    clock = float(sm.get("tensor_clock_ghz") or spec.get("clock_ghz", 1.0)) * 1e9
    flops = float(sm.get("tensor_flops_per_cycle", 0)) * float(sm.get("count", 1)) * clock
    dram = float(spec.get("hbm", {}).get("bandwidth_gbps", 0)) * 1e9
    l2 = float(spec.get("l2", {}).get("bandwidth_gbps", 0) or 0) * 1e9
    if float(spec.get("l2", {}).get("capacity_bytes", 0) or 0) == 0:
        l2 = 0.0
    return flops, dram, l2


def point_text(res, row, keys):
    """Short label of a point: N=4096, L2 off, block_n=128, ..."""
    parts = []
    for k in keys:
        v = res.table[k][row]
        if k == "device.l2.capacity_bytes":
            if float(v) == 0:
                parts.append("L2 off")
        elif k in ("seq", "seq_q", "seq_kv"):
            parts.append(f"N={v}")
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--device", help="device preset or YAML (default: the results' device column)")
    ap.add_argument("--label", default="kernel", help="column whose value picks each point's marker")
    ap.add_argument("--annotate", help="comma-separated columns to label points with (default: the varying "
                    "parameters except --label; 'none': no labels)")
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    ok = res.ok()
    if not ok.any():
        raise SystemExit(f"{a.file}: no ok points to place")
    dev = a.device or str(ar.param(res, int(np.flatnonzero(ok)[0]), "device"))
    spec = ar.load_device(dev)
    peak, bw_dram, bw_l2 = peaks(spec)

    flops = res.col("attnsim__flops").astype(float)
    t = res.col("gpu__time_duration.sum").astype(float) * 1e-9
    dram = ar.dram_bytes(res)
    l2 = res.col("lts__t_bytes.sum").astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        perf = flops / t
        ai_dram = flops / dram
        ai_l2 = flops / l2
    valid = ok & np.isfinite(perf) & (perf > 0)

    fig, ax = plt.subplots(figsize=(9.5, 5.2))
    finite_ai = np.concatenate([ai_dram[valid & np.isfinite(ai_dram)], ai_l2[valid & np.isfinite(ai_l2)]])
    lo = min(0.5, finite_ai.min() / 2) if finite_ai.size else 0.5
    hi = max(2e4, finite_ai.max() * 2) if finite_ai.size else 2e4
    ai = np.logspace(np.log10(lo), np.log10(hi), 200)
    roofs = [("DRAM", bw_dram, "-", "0.0"), ("L2", bw_l2, "--", "0.45")]
    for name, bw, ls, c in roofs:
        if bw <= 0:
            continue
        ax.plot(ai, np.minimum(peak, ai * bw) / 1e12, linestyle=ls, color=c, linewidth=1.6,
                label=f"{name} roof: {bw / 1e12:.2f} TB/s, ridge at {peak / bw:.0f} FLOP/B")
    ax.axhline(peak / 1e12, color="0.7", linewidth=0.8, linestyle=":")
    ax.text(lo * 1.1, peak / 1e12 * 1.08, f"tensor-core peak {peak / 1e12:.0f} TFLOP/s", fontsize=8, color="0.3")

    labels = list(dict.fromkeys(res.table[a.label][valid])) if res.has(a.label) else [None]
    for li, lab in enumerate(labels):
        sel = valid & ((res.table[a.label] == lab) if lab is not None else True)
        mk = ar.MARKERS[li % len(ar.MARKERS)]
        name = f"{lab}" if lab is not None else "points"
        ax.scatter(ai_dram[sel], perf[sel] / 1e12, marker=mk, s=46, facecolors="0.15", edgecolors="0.0",
                   label=f"{name} @ DRAM intensity", zorder=3)
        if bw_l2 > 0:
            ax.scatter(ai_l2[sel], perf[sel] / 1e12, marker=mk, s=46, facecolors="white", edgecolors="0.0",
                       label=f"{name} @ L2 intensity", zorder=3)
            for i in np.flatnonzero(sel):
                if np.isfinite(ai_l2[i]) and np.isfinite(ai_dram[i]):
                    ax.plot([ai_l2[i], ai_dram[i]], [perf[i] / 1e12] * 2, color="0.75", linewidth=0.6, zorder=1)
    if a.annotate == "none":
        keys = []
    elif a.annotate:
        keys = [k for k in a.annotate.split(",") if res.has(k)]
    else:
        keys = [k for k in res.varying_params() if k != a.label]
    placed = []  # log10 positions of the labels so far: a point too close to one stays unlabelled
    for i in np.flatnonzero(valid) if keys else []:
        if not np.isfinite(ai_dram[i]):
            continue
        x, y = np.log10(ai_dram[i]), np.log10(perf[i] / 1e12)
        if any(abs(x - px) < 0.25 and abs(y - py) < 0.06 for px, py in placed):
            continue
        placed.append((x, y))
        ax.annotate(point_text(res, i, keys), (ai_dram[i], perf[i] / 1e12), xytext=(4, 3),
                    textcoords="offset points", fontsize=6, color="0.25", zorder=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved at that level)")
    ax.set_ylabel("throughput (TFLOP/s)")
    ax.grid(True, which="major", color="0.88", linewidth=0.6)
    ax.set_title(a.title or res.sweep_title() or f"roofline on {spec.get('name', dev)}: {os.path.basename(a.file)}",
                 fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
