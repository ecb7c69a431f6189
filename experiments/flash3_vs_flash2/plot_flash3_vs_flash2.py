#!/usr/bin/python3
"""flash3_vs_flash2 figure and comparison: forward TFLOP/s vs sequence length of the simulated
flash3 and flash2 per device, head dim and causal setting, with the FA-3 paper's measured points
(tests/data/reference/fa3_paper_fwd.csv, H100 SXM5) overlaid on the h100-sxm panels; prints the
errors against the paper (median and worst |error|, Spearman, FA-3/FA-2 speed-up per point).

    /usr/bin/python3 experiments/flash3_vs_flash2/plot_flash3_vs_flash2.py RESULTS.h5 OUT.png
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402

PAPER = os.path.join(HERE, "..", "..", "tests", "data", "reference", "fa3_paper_fwd.csv")
IMPL = {"flash3": "fa3", "flash2": "fa2"}


def paper_points():
    """{(impl, dtype, head_dim, causal, seq): tflops} from the paper's CSV."""
    out = {}
    with open(PAPER) as f:
        rows = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(rows):
        key = (r["impl"], r["dtype"], int(r["head_dim"]), r["causal"] == "true", int(r["seq_len"]))
        out[key] = float(r["tflops"])
    return out


def simulated(res):
    """[(device, kernel, dtype, head_dim, causal, seq, tflops, paper_shape)] of the ok rows; paper_shape:
    batch x seq = 16384 and heads x head_dim = 2048, the paper's shape (the quick sweep is smaller)."""
    ok = res.ok()
    t_ns = res.col("gpu__time_duration.sum").astype(float)
    out = []
    for r in np.flatnonzero(ok):
        r = int(r)
        n = int(ar.param(res, r, "seq_q"))
        d = int(ar.param(res, r, "head_dim"))
        b = int(ar.param(res, r, "batch"))
        h = int(ar.param(res, r, "heads"))
        causal = str(ar.param(res, r, "causal")).lower() in ("true", "1")
        flops = 4.0 * b * h * n * n * d / (2 if causal else 1)
        paper_shape = b * n == 16384 and h * d == 2048
        out.append((str(ar.param(res, r, "device")), str(ar.param(res, r, "kernel")), str(ar.param(res, r, "dtype")),
                    d, causal, n, flops / t_ns[r] / 1e3, paper_shape))
    return out


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 2 else float("nan")


def report(sim, paper):
    """Prints the comparison with the paper (h100-sxm rows only) and returns its lines."""
    lines = []
    by = {(k, dt, d, c, n): v for dev, k, dt, d, c, n, v, same in sim if dev == "h100-sxm" and same}
    for kernel, dtype in (("flash3", "fp16"), ("flash2", "fp16"), ("flash3", "fp8")):
        pairs = [(by[(kernel, dtype, d, c, n)], p) for (impl, dt, d, c, n), p in paper.items()
                 if impl == IMPL[kernel] and dt == dtype and (kernel, dtype, d, c, n) in by]
        if not pairs:
            continue
        s, p = np.array(pairs).T
        err = np.abs(s / p - 1) * 100
        lines.append(f"{kernel} {dtype} vs paper {IMPL[kernel]} ({len(pairs)} points): median |error| "
                     f"{np.median(err):.1f} %, worst {err.max():.1f} %, Spearman {spearman(s, p):.3f}")
    ratio_err = []
    for (impl, dt, d, c, n), p3 in paper.items():
        p2 = paper.get(("fa2", dt, d, c, n))
        s3, s2 = by.get(("flash3", dt, d, c, n)), by.get(("flash2", dt, d, c, n))
        if impl == "fa3" and dt == "fp16" and p2 and s3 and s2:
            ratio_err.append(abs((s3 / s2) / (p3 / p2) - 1) * 100)
    if ratio_err:
        e = np.array(ratio_err)
        lines.append(f"FA-3/FA-2 speed-up vs paper ({len(e)} points): median |error| {np.median(e):.1f} %, "
                     f"worst {e.max():.1f} %, within 10 %: {int((e <= 10).sum())}/{len(e)}")
    for line in lines:
        print(line)
    return lines


def main():
    res = ar.Results(sys.argv[1])
    sim = simulated(res)
    paper = paper_points()
    report(sim, paper)
    devices = list(dict.fromkeys(s[0] for s in sim))
    panels = sorted(set((s[3], s[4]) for s in sim))
    fig, axes = plt.subplots(len(devices), len(panels), figsize=(3.1 * len(panels) + 0.6, 3.0 * len(devices) + 0.8),
                             squeeze=False, sharey=True)
    series = sorted(set((s[1], s[2]) for s in sim))
    for i, dev in enumerate(devices):
        for j, (d, causal) in enumerate(panels):
            ax = axes[i][j]
            for k, (kernel, dtype) in enumerate(series):
                pts = sorted((s[5], s[6]) for s in sim if s[0] == dev and s[1:5] == (kernel, dtype, d, causal))
                if pts:
                    x, y = zip(*pts)
                    ax.plot(x, y, color="0.0", linestyle=ar.LINESTYLES[k % len(ar.LINESTYLES)],
                            marker=ar.MARKERS[k % len(ar.MARKERS)], markersize=4, label=f"{kernel} {dtype} (sim)")
                if dev != "h100-sxm" or not any(s[7] for s in sim):
                    continue
                ref = sorted((n, v) for (impl, dt, dd, c, n), v in paper.items()
                             if impl == IMPL.get(kernel) and dt == dtype and dd == d and c == causal)
                if ref:
                    x, y = zip(*ref)
                    ax.plot(x, y, color="0.55", linestyle="none", marker=ar.MARKERS[k % len(ar.MARKERS)],
                            markerfacecolor="white", markersize=6, label=f"{IMPL[kernel]} {dtype} (paper)")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{dev}, d = {d}{', causal' if causal else ''}", fontsize=9)
            ax.set_xlabel("sequence length N", fontsize=8)
            if j == 0:
                ax.set_ylabel("forward TFLOP/s", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, color="0.88", linewidth=0.6)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    legend = fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4 if len(panels) > 2 else 2),
                        fontsize=8, frameon=False)
    shape = ("batch x N = 16k tokens, hidden 2048; open markers: the FA-3 paper (Shah et al. 2024, H100 SXM5)"
             if all(s[7] for s in sim) else "quick shape: fewer tokens and heads than the paper's, no paper points")
    ar.suptitle(fig, f"FlashAttention-3 vs FlashAttention-2 forward TFLOP/s, {shape}", fontsize=10)
    ar.layout_with_bottom_legend(fig, legend)
    ar.savefig(fig, sys.argv[2])
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
