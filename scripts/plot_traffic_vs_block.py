#!/usr/bin/python3
"""HBM traffic and runtime vs block size (FlashAttention, Dao et al. 2022, Figure 2 middle).

    /usr/bin/python3 scripts/plot_traffic_vs_block.py RESULTS.h5 OUT.{png,svg,pdf}
        [--x block_n] [--group device.l2.capacity_bytes] [--title TEXT]

Left panel: DRAM (HBM) bytes read + written vs block size, one line per value of the group
column (e.g. L2 on / off), with the closed-form count of `attnsim formulas` overlaid (every
global access reaches HBM; needs $ATTNSIM or a built attnsim). Right panel: simulated runtime.
The x column defaults to block_n if it varies, else block_m; the group defaults to the
other varying parameter, if any.
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

FORMULA_KERNELS = ("standard", "flash1", "flash2")


def closed_form_bytes(res, row):
    """Closed-form HBM bytes of the row's workload from `attnsim formulas --json`, or None."""
    kernel = ar.param(res, row, "kernel")
    if kernel not in FORMULA_KERNELS:
        return None
    seq = ar.param(res, row, "seq_q")
    d = ar.param(res, row, "head_dim")
    if seq is None or d is None:
        return None
    args = ["formulas", "--seq", str(int(seq)), "--tile", "64", "--head-dim", str(int(d))]
    for key, flag in (("heads", "--heads"), ("batch", "--batch"), ("kv_heads", "--kv-heads"),
                      ("block_m", "--block-m"), ("block_n", "--block-n"), ("dtype", "--dtype"),
                      ("pass", "--pass")):
        v = ar.param(res, row, key)
        if v is not None and str(v) not in ("", "0", "nan"):
            args += [flag, str(int(v)) if isinstance(v, (int, np.integer, float)) else str(v)]
    if str(ar.param(res, row, "causal")).lower() == "true":
        args.append("--causal")
    j = ar.attnsim_json(args)
    if not j or kernel not in j:
        return None
    return float(j[kernel]["total"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--x", help="block-size column (default: block_n if it varies, else block_m)")
    ap.add_argument("--group", help="one line per value of this column")
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    varying = res.varying_params()
    x_key = a.x or ("block_n" if "block_n" in varying else "block_m")
    if not res.has(x_key):
        raise SystemExit(f"{a.file}: no column {x_key} in /table")
    group_key = a.group or next((k for k in varying if k != x_key), None)

    ok = res.ok()
    x = res.col(x_key).astype(float)
    dram = ar.dram_bytes(res)
    time_ms = res.col("gpu__time_duration.sum").astype(float) / 1e6
    groups = [None] if group_key is None else list(dict.fromkeys(res.table[group_key][ok]))

    finite = dram[ok & np.isfinite(dram)]
    unit, scale = ("GB", 1e9) if finite.size == 0 or finite.max() >= 1e9 else ("MB", 1e6)
    fig, (ax_b, ax_t) = plt.subplots(1, 2, figsize=(11, 4.2))
    for gi, g in enumerate(groups):
        sel = ok & ((res.table[group_key] == g) if group_key else True)
        order = np.argsort(x[sel])
        label = "simulated" if g is None else "simulated, " + ar.label_for(group_key, g)
        style = dict(marker=ar.MARKERS[gi % len(ar.MARKERS)], linestyle=ar.LINESTYLES[gi % len(ar.LINESTYLES)],
                     color=ar.GREYS[gi % len(ar.GREYS)], markersize=7, linewidth=1.8)
        ax_b.plot(x[sel][order], dram[sel][order] / scale, label=label, **style)
        ax_t.plot(x[sel][order], time_ms[sel][order], label=label, **style)
        if gi == 0:  # resident CTAs per SM of the longest kernel: why the runtime turns
            for row in np.flatnonzero(sel):
                ms = [m for _, m in res.kernels(row)]
                if not ms:
                    continue
                m = max(ms, key=lambda k: k.get("gpu__time_duration.sum", 0.0))
                lim = [m[k] for k in m if k.startswith("launch__occupancy_limit_")]
                if lim:
                    ax_t.annotate(f"{min(lim):.0f} CTA/SM", (x[row], time_ms[row]), textcoords="offset points",
                                  xytext=(0, -14), ha="center", fontsize=7, color="0.25")

    # Closed form: one value per block size (it does not depend on the L2 or other device axes).
    xs, cf = [], []
    for v in sorted(set(x[ok])):
        row = int(np.flatnonzero(ok & (x == v))[0])
        b = closed_form_bytes(res, row)
        if b is not None:
            xs.append(v)
            cf.append(b)
    if cf:
        ax_b.plot(xs, np.array(cf) / scale, linestyle=(0, (1, 1)), marker="x", color="0.0", markersize=9,
                  linewidth=1.2, label="closed form (attnsim formulas, L2 off)")
        # 1/B reference through the first closed-form point.
        ref = np.array(cf[0]) * xs[0] / np.array(xs)
        ax_b.plot(xs, ref / scale, linestyle=":", color="0.55", linewidth=1.0, label=r"$\propto 1/B$ reference")
    else:
        ax_b.text(0.02, 0.02, "closed form unavailable (set $ATTNSIM)", transform=ax_b.transAxes, fontsize=8)

    kernel = ar.param(res, int(np.flatnonzero(ok)[0]), "kernel") if ok.any() else "?"
    for ax in (ax_b, ax_t):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(set(x[ok])))
        if ok.any():
            ax.set_xlim(np.nanmin(x[ok]) / 1.25, np.nanmax(x[ok]) * 1.25)
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel(f"block size {x_key} (rows)")
        ax.grid(True, which="both", color="0.85", linewidth=0.6)
    ax_b.set_yscale("log")
    ax_b.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax_b.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax_b.tick_params(axis="y", which="minor", labelsize=7)
    ax_b.set_ylabel(f"HBM traffic, read + write ({unit})")
    ax_b.set_title("HBM accesses vs block size")
    ax_t.set_ylabel("simulated runtime (ms)")
    ax_t.set_ylim(bottom=0)
    ax_t.set_title("runtime vs block size")
    ax_b.legend(fontsize=7.5, loc="upper right")
    ax_t.legend(fontsize=7.5, loc="upper right")
    fig.suptitle(a.title or res.sweep_title() or f"{kernel} forward, {os.path.basename(a.file)}", fontsize=11)
    fig.tight_layout()
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
