#!/usr/bin/python3
"""Checks scripts/plot_parity.py on a small synthetic compare report (HDF5 and JSON).

Exits non-zero on the first failure. Run: /usr/bin/python3 scripts/tests/test_plot_parity.py
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "plot_parity.py")
PY = "/usr/bin/python3"

# Two metrics: DRAM bytes spanning four decades (log axes), occupancy limits (linear).
ROWS = [
    ("B1H32N1024d128/std", 0, "dram__bytes_read.sum", 16801792.0, 17641881.6),
    ("B1H32N8192d128/std", 2, "dram__bytes_read.sum", 4402924800.0, 4200000000.0),
    ("B1H32N1024d128/sdpa_flash", 0, "dram__bytes_read.sum", 25222912.0, 25165824.0),
    ("B1H32N1024d128/std", 0, "launch__occupancy_limit_registers", 1.0, 1.0),
    ("B1H32N1024d128/sdpa_flash", 0, "launch__occupancy_limit_registers", 2.0, 2.0),
]

def write_h5(path):
    s = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        g = f.create_group("comparison")
        g["label"] = np.array([r[0] for r in ROWS], dtype=object).astype(s)
        g["kernel_index"] = np.array([r[1] for r in ROWS], dtype=np.int64)
        g["metric"] = np.array([r[2] for r in ROWS], dtype=object).astype(s)
        g["measured"] = np.array([r[3] for r in ROWS])
        g["simulated"] = np.array([r[4] for r in ROWS])
        g["abs_error"] = g["simulated"][()] - g["measured"][()]
        g["rel_error"] = g["abs_error"][()] / g["measured"][()]


def write_json(path):
    rows = [{"label": r[0], "kernel_index": r[1], "metric": r[2], "measured": r[3], "simulated": r[4],
             "abs_error": r[4] - r[3], "rel_error": (r[4] - r[3]) / r[3]} for r in ROWS]
    with open(path, "w") as f:
        json.dump({"rows": rows, "summary": []}, f)


def run(*args):
    return subprocess.run([PY, SCRIPT, *args], capture_output=True, text=True,
                          env=dict(os.environ, MPLBACKEND="Agg"))


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_parity(check):
    with tempfile.TemporaryDirectory() as tmp:
        h5 = os.path.join(tmp, "report.h5")
        write_h5(h5)
        out = os.path.join(tmp, "figs")
        r = run(h5, "--out", out)
        check(r.returncode == 0, f"plot from HDF5 exits 0 (got {r.returncode}: {r.stderr})")
        for name in ("parity_dram__bytes_read.sum.png", "parity_launch__occupancy_limit_registers.png",
                     "parity_all.png"):
            path = os.path.join(out, name)
            check(os.path.exists(path) and is_png(path), f"{name} written as PNG")

        js = os.path.join(tmp, "report.json")
        write_json(js)
        r = run(js, "--out", os.path.join(tmp, "svg"), "--format", "svg",
                "--metrics", "dram__bytes_read.sum")
        check(r.returncode == 0, f"plot from JSON exits 0 (got {r.returncode}: {r.stderr})")
        svg = os.path.join(tmp, "svg", "parity_dram__bytes_read.sum.svg")
        check(os.path.exists(svg) and open(svg).read().lstrip().startswith("<?xml"), "SVG written")
        check(not os.path.exists(os.path.join(tmp, "svg", "parity_launch__occupancy_limit_registers.svg")),
              "--metrics restricts the panels")

        r = run(h5, "--out", out, "--metrics", "no_such_metric")
        check(r.returncode == 2 and "no_such_metric" in r.stderr, "unknown metric exits 2 naming it")

        bad = os.path.join(tmp, "bad.h5")
        with h5py.File(bad, "w") as f:
            f.create_group("table")
        r = run(bad, "--out", out)
        check(r.returncode == 2 and "/comparison" in r.stderr, "a file without /comparison exits 2")

        # Axis choice and title: import the module and draw one panel.
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import plot_parity

        rows = plot_parity.load_rows(h5)
        fig, ax = plt.subplots()
        plot_parity.plot_metric(ax, "dram__bytes_read.sum", [x for x in rows if x["metric"] == "dram__bytes_read.sum"])
        check(ax.get_xscale() == "log" and ax.get_yscale() == "log", "four decades of bytes get log axes")
        # |rel| = 0.05, 0.0461, 0.00226 -> median 4.6 %, worst 5.0 %.
        check("median |err| 4.6 %" in ax.get_title() and "worst 5.0 %" in ax.get_title(),
              f"title carries median and worst error (got {ax.get_title()!r})")
        fig2, ax2 = plt.subplots()
        plot_parity.plot_metric(ax2, "launch__occupancy_limit_registers",
                                [x for x in rows if x["metric"] == "launch__occupancy_limit_registers"])
        check(ax2.get_xscale() == "linear", "small-range metric keeps linear axes")


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
