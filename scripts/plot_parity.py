#!/usr/bin/python3
"""Parity plots of an `attnsim compare` report: measured (x) vs simulated (y), one panel per metric.

usage: /usr/bin/python3 scripts/plot_parity.py REPORT.h5|REPORT.json --out DIR [--format png|svg|pdf]
                                              [--metrics m1,m2,...]

Reads /comparison (HDF5, from `attnsim compare --out`) or "rows" (JSON, from `--json`). Writes
DIR/parity_<metric>.<format> for each metric, plus DIR/parity_all.<format> with every panel.
Each panel: y = x, +-10 / 20 / 25 % bands, log axes when the values span more than two decades,
bytes in kB / MB / GB and times in µs / ms by their size,
markers distinguished by shape and fill (readable in greyscale), and the median / worst
|relative error| in the title.
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402  (write_output: docs/output-paths.md)

BANDS = [(0.10, "0.35"), (0.20, "0.6"), (0.25, "0.8")]  # (fraction, grey level)
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def load_rows(path):
    """List of dicts with label, metric, measured, simulated, rel_error."""
    if path.endswith(".json"):
        with open(path) as f:
            doc = json.load(f)
        rows = doc["rows"]
        for r in rows:
            for k in ("measured", "simulated", "rel_error"):
                if r.get(k) is None:
                    r[k] = float("nan")
        return rows
    import h5py

    with h5py.File(path, "r") as f:
        if "comparison" not in f:
            raise ValueError(f"{path}: no /comparison group; expected the --out of attnsim compare")
        g = f["comparison"]

        def text(name):
            return [v.decode() if isinstance(v, bytes) else str(v) for v in g[name][()]]

        labels, metrics = text("label"), text("metric")
        measured, simulated, rel = g["measured"][()], g["simulated"][()], g["rel_error"][()]
        kernel_index = g["kernel_index"][()]
    return [
        {
            "label": labels[i],
            "kernel_index": int(kernel_index[i]),
            "metric": metrics[i],
            "measured": float(measured[i]),
            "simulated": float(simulated[i]),
            "rel_error": float(rel[i]),
        }
        for i in range(len(labels))
    ]


def unit_of(metric, values=()):
    """(unit, divisor): bytes in kB/MB/GB and ns in µs/ms by the largest of `values`."""
    if "bytes" in metric:
        return ar.byte_unit(values)
    if "time_duration" in metric:
        return ar.time_unit(values)
    if metric.endswith("pct") or "pct_of" in metric:
        return "%", 1.0
    return "count", 1.0


def series_key(row):
    """Group markers by variant (the part of the label after '/'), else by kernel index."""
    label = row["label"]
    return label.split("/", 1)[1] if "/" in label else f"kernel {row.get('kernel_index', 0)}"


def plot_metric(ax, metric, rows):
    unit, scale = unit_of(metric, [v for r in rows for v in (r["measured"], r["simulated"]) if math.isfinite(v)])
    xs = [r["measured"] / scale for r in rows]
    ys = [r["simulated"] / scale for r in rows]
    finite = [v for v in xs + ys if math.isfinite(v)]
    positive = [v for v in finite if v > 0]
    lo = min(finite) if finite else 0.0
    hi = max(finite) if finite else 1.0
    use_log = bool(positive) and len(positive) == len(finite) and max(positive) / min(positive) > 100.0
    if use_log:
        lo, hi = min(positive) / 1.5, max(positive) * 1.5
    else:
        pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.1
        lo, hi = lo - pad, hi + pad
    line = [lo, hi]
    for frac, grey in reversed(BANDS):
        ax.fill_between(line, [v * (1 - frac) for v in line], [v * (1 + frac) for v in line],
                        color=grey, alpha=0.35, linewidth=0, label=f"±{int(frac * 100)} %")
    ax.plot(line, line, color="black", linewidth=1.0, label="y = x")
    groups = {}
    for r in rows:
        groups.setdefault(series_key(r), []).append(r)
    for i, (name, grp) in enumerate(sorted(groups.items())):
        filled = i % 2 == 0
        ax.scatter([r["measured"] / scale for r in grp], [r["simulated"] / scale for r in grp],
                   marker=MARKERS[i % len(MARKERS)], s=36,
                   facecolors="black" if filled else "white", edgecolors="black", linewidths=1.0,
                   label=name, zorder=3)
    if use_log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(f"measured [{unit}]")
    ax.set_ylabel(f"simulated [{unit}]")
    errs = sorted(abs(r["rel_error"]) for r in rows if math.isfinite(r["rel_error"]))
    if errs:
        n = len(errs)
        med = errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2
        ax.set_title(f"{metric}\nmedian |err| {med * 100:.1f} %, worst {errs[-1] * 100:.1f} % (n={n})",
                     fontsize=9)
    else:
        ax.set_title(metric, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", help="attnsim compare --out REPORT.h5 or --json output")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--format", default="png", choices=["png", "svg", "pdf"])
    p.add_argument("--metrics", default="", help="comma-separated metric names (default: all)")
    a = p.parse_args(argv)
    try:
        rows = load_rows(a.report)
    except (OSError, KeyError, ValueError) as e:
        print(f"plot_parity: {e}", file=sys.stderr)
        return 2
    by_metric = {}
    for r in rows:
        by_metric.setdefault(r["metric"], []).append(r)
    wanted = [m for m in a.metrics.split(",") if m] or list(by_metric)
    missing = [m for m in wanted if m not in by_metric]
    if missing:
        print(f"plot_parity: metrics not in the report: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not wanted:
        print("plot_parity: the report has no rows", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    written = []
    for m in wanted:
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        plot_metric(ax, m, by_metric[m])
        fig.tight_layout(pad=1.5)
        path = os.path.join(a.out, f"parity_{m}.{a.format}")
        ar.savefig(fig, path, fmt=a.format)
        plt.close(fig)
        written.append(path)
    cols = min(3, len(wanted))
    nrows = math.ceil(len(wanted) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.5 * cols, 4.5 * nrows), squeeze=False)
    for ax, m in zip(axes.flat, wanted):
        plot_metric(ax, m, by_metric[m])
    for ax in list(axes.flat)[len(wanted):]:
        ax.axis("off")
    fig.tight_layout(pad=1.5)
    path = os.path.join(a.out, f"parity_all.{a.format}")
    ar.savefig(fig, path, fmt=a.format)
    plt.close(fig)
    written.append(path)
    for w in written:
        print(f"wrote {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
