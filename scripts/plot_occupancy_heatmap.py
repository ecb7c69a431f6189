#!/usr/bin/python3
"""Occupancy heatmap over two swept parameters, each cell annotated with its limiting resource.

    /usr/bin/python3 scripts/plot_occupancy_heatmap.py RESULTS.h5 OUT.{png,svg,pdf}
        [--x block_n --y block_m | --x warps --y stages] [--select key=value ...]
        [--metric theoretical|achieved|time] [--title TEXT]

Cell value: theoretical occupancy, sm__maximum_warps_per_active_cycle_pct (default), the
achieved sm__warps_active.avg.pct_of_peak_sustained_active (--metric achieved) of the
point's longest-running kernel, or the run's gpu__time_duration.sum (--metric time, µs). Annotation: CTAs per SM and the resource whose
launch__occupancy_limit_* (blocks, registers, shared_mem, warps) is smallest — ties name
each. Impossible / error points are hatched and labelled. --select keeps rows whose column
equals the value (repeatable); the first row of each (x, y) cell is used. Title: --title, else
the sweep's name and question; the panel's title names the metric, the axes and the selection.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402

LIMITS = [("launch__occupancy_limit_registers", "regs"), ("launch__occupancy_limit_shared_mem", "smem"),
          ("launch__occupancy_limit_warps", "warps"), ("launch__occupancy_limit_blocks", "blocks")]
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"


def main_kernel_metrics(res, row):
    """Metrics of the row's longest kernel (the table's totals do not carry launch__*)."""
    ks = res.kernels(row)
    if not ks:
        return {c: float(res.col(c)[row]) for c in res.columns if c.startswith(("launch__", "sm__"))}
    return max(ks, key=lambda k: k[1].get("gpu__time_duration.sum", 0.0))[1]


def limiter(m):
    vals = [(m.get(k, np.nan), short) for k, short in LIMITS]
    vals = [(v, s) for v, s in vals if np.isfinite(v)]
    if not vals:
        return np.nan, "?"
    lo = min(v for v, _ in vals)
    return lo, "+".join(s for v, s in vals if v == lo)


def parse_select(res, items):
    keep = np.ones(res.rows, dtype=bool)
    for it in items or []:
        if "=" not in it:
            raise SystemExit(f"--select {it}: expected key=value")
        k, v = it.split("=", 1)
        if not res.has(k):
            raise SystemExit(f"--select {it}: no column {k} in /table")
        keep &= np.array([str(c) == v or (_num(c) is not None and _num(c) == _num(v)) for c in res.table[k]])
    return keep


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--x")
    ap.add_argument("--y")
    ap.add_argument("--select", action="append")
    ap.add_argument("--metric", choices=["theoretical", "achieved", "time"], default="theoretical")
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    res = ar.Results(a.file)
    varying = res.varying_params()
    if a.x and a.y:
        x_key, y_key = a.x, a.y
    elif "block_m" in varying and "block_n" in varying:
        x_key, y_key = "block_n", "block_m"
    elif "stages" in varying and "warps" in varying:
        x_key, y_key = "warps", "stages"
    elif len(varying) >= 2:
        x_key, y_key = varying[-1], varying[-2]
    else:
        raise SystemExit(f"{a.file}: need two varying parameters (give --x and --y)")
    for k in (x_key, y_key):
        if not res.has(k):
            raise SystemExit(f"{a.file}: no column {k} in /table")

    keep = parse_select(res, a.select)
    status = res.status()
    xs = sorted(set(res.table[x_key][keep]), key=lambda v: (_num(v) is None, _num(v) or 0, str(v)))
    ys = sorted(set(res.table[y_key][keep]), key=lambda v: (_num(v) is None, _num(v) or 0, str(v)))
    grid = np.full((len(ys), len(xs)), np.nan)
    notes = {}
    achieved = ar.achieved_occupancy(res) if a.metric == "achieved" else None
    for row in np.flatnonzero(keep):
        xi = xs.index(res.table[x_key][row])
        yi = ys.index(res.table[y_key][row])
        if (yi, xi) in notes:
            continue
        if status[row] != ar.STATUS_OK:
            notes[(yi, xi)] = (str(status[row]), None)
            continue
        m = main_kernel_metrics(res, row)
        if a.metric == "time":
            grid[yi, xi] = float(res.col("gpu__time_duration.sum")[row]) / 1e3
        else:
            grid[yi, xi] = achieved[row] if achieved is not None else m.get(THEORETICAL, np.nan)
        ctas, lim = limiter(m)
        notes[(yi, xi)] = (f"{ctas:.0f} CTA/SM\n{lim}" if np.isfinite(ctas) else lim, True)

    fig, ax = plt.subplots(figsize=(max(1.25 * len(xs) + 2.6, 6.4), 0.9 * len(ys) + 2.4))
    is_time = a.metric == "time"
    top = np.nanmax(grid) if is_time and np.isfinite(grid).any() else 100
    im = ax.imshow(grid, cmap="Greys", vmin=0, vmax=top, origin="lower", aspect="auto")
    for (yi, xi), (text, ok) in notes.items():
        if ok is None:
            ax.add_patch(Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, hatch="xx", edgecolor="0.5", linewidth=0))
            ax.text(xi, yi, text, ha="center", va="center", fontsize=7.5, color="0.1",
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"))
            continue
        v = grid[yi, xi]
        dark = np.isfinite(v) and v > 0.55 * top
        value = (f"{v:.1f} µs" if is_time else f"{v:.3g} %") if np.isfinite(v) else ""
        ax.text(xi, yi, f"{value}\n{text}" if value else text, ha="center", va="center", fontsize=7.5,
                color="white" if dark else "black")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(v) for v in xs])
    ax.set_yticks(range(len(ys)))
    ax.set_yticklabels([str(v) for v in ys])
    ax.set_xlabel(ar.axis_label(x_key))
    ax.set_ylabel(ar.axis_label(y_key))
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("simulated time (µs)" if is_time else
                 a.metric + " occupancy (% of max warps per SM)")
    sel = ", ".join(ar.label_for(k, v).replace(" = ", "\u00a0=\u00a0")  # "warps = 4" kept on one line
                    for k, _, v in (it.partition("=") for it in a.select or []))
    what = "simulated time" if is_time else f"{a.metric} occupancy"
    short = {"block_m": "B_r", "block_n": "B_c"}
    ax.set_title(ar.wrap_to_width(f"{what} over ({short.get(y_key, y_key)}, {short.get(x_key, x_key)})"
                                  + (f" at {sel}" if sel else ""), fig, 9, 0.8), fontsize=9)
    ax.annotate(f"cell: {'time' if is_time else 'occupancy'}, CTAs per SM, limiting resource "
                "(launch__occupancy_limit_*)", xy=(0, 0), xycoords=("axes fraction", ax.xaxis.label),
                xytext=(0, -4), textcoords="offset points", fontsize=7, color="0.3", va="top")  # under the x label
    title = a.title or res.sweep_title()
    if title:
        ar.suptitle(fig, title, fontsize=10)
    fig.tight_layout()
    ar.savefig(fig, a.out)
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
