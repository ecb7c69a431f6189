#!/usr/bin/python3
"""Prints the summary table of an attnsim results file.

    /usr/bin/python3 scripts/summarize.py results/block_size.h5 [--all-params]

One line per point: the swept parameters (those that vary; --all-params for every parameter
column), status, DRAM bytes (read + write), L2 bytes, simulated time and achieved occupancy;
impossible/error points show their reason. Ends with the ok / impossible / error counts.
Exit status: 0, or 2 if the file cannot be read.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnsim_results as ar  # noqa: E402

METRICS = [
    ("DRAM bytes", lambda r: r.col("dram__bytes_read.sum").astype(float) + r.col("dram__bytes_write.sum").astype(float),
     ar.fmt_bytes),
    ("L2 bytes", lambda r: r.col("lts__t_bytes.sum").astype(float), ar.fmt_bytes),
    ("time", lambda r: r.col("gpu__time_duration.sum").astype(float), lambda v: "-" if not np.isfinite(v) else
     (f"{v / 1e6:.3f} ms" if v >= 1e5 else f"{v / 1e3:.2f} us")),
    ("occupancy", ar.achieved_occupancy,
     lambda v: "-" if not np.isfinite(v) else f"{v:.1f} %"),
]


def cell(v):
    if isinstance(v, (float, np.floating)):
        return "-" if not np.isfinite(v) else f"{v:g}"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--all-params", action="store_true", help="show every parameter column, not only the varying ones")
    a = ap.parse_args(argv)
    try:
        res = ar.Results(a.file)
    except (OSError, SystemExit) as e:
        print(f"summarize.py: cannot read {a.file}: {e}", file=sys.stderr)
        return 2

    params = res.param_columns() if a.all_params else res.varying_params()
    if not params and res.param_columns():
        params = [p for p in ("kernel", "device", "seq_q") if p in res.param_columns()]
    status = res.status()
    reasons = res.col("reason", "")
    metric_vals = [(name, f(res), fmt) for name, f, fmt in METRICS]

    header = ["#"] + params + ["status"] + [m[0] for m in metric_vals]
    rows = []
    for i in range(res.rows):
        row = [str(res.point_index(i))] + [cell(res.table[p][i]) for p in params] + [str(status[i])]
        if status[i] == ar.STATUS_OK:
            row += [fmt(vals[i]) for _, vals, fmt in metric_vals]
        else:
            row += [str(reasons[i])] + [""] * (len(metric_vals) - 1)
        rows.append(row)

    widths = [len(h) for h in header]
    for r in rows:
        for j, c in enumerate(r):
            if status_reason_column(header, j, r):
                continue
            widths[j] = max(widths[j], len(c))
    print("  ".join(h.rjust(w) if j == 0 else h.ljust(w) for j, (h, w) in enumerate(zip(header, widths))))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.rjust(w) if j == 0 else c.ljust(w) for j, (c, w) in enumerate(zip(r, widths))).rstrip())

    counts = {s: int(np.sum(status == s)) for s in ("ok", "impossible", "error")}
    other = res.rows - sum(counts.values())
    noun = "point" if res.rows == 1 else "points"
    line = f"{res.rows} {noun}: {counts['ok']} ok, {counts['impossible']} impossible, {counts['error']} error"
    if other:
        line += f", {other} other"
    print(line)
    complete = res.file.attrs.get("complete", 1)
    if int(complete) == 0:
        print("note: the file is an interim snapshot of an unfinished sweep (attribute complete = 0)")
    res.close()
    return 0


def status_reason_column(header, j, row):
    """The reason text of a non-ok row spans the metric columns: it does not set their width."""
    return j == len(header) - len(METRICS) and row[header.index("status")] != ar.STATUS_OK


if __name__ == "__main__":
    sys.exit(main())
