#!/usr/bin/env python3
"""The sweep table carries, per point, its longest launch's occupancy (limits, waves, theoretical and
achieved, limiter) and the point's TFLOP/s, DRAM GB/s, % of peak and bound (docs/hdf5-schema.md,
schema version 2), and scripts/check_h5.py rejects a version-2 file without them.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_results_columns.py"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTNSIM = os.path.abspath(os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))
CHECK = os.path.join(ROOT, "scripts", "check_h5.py")

SWEEP = """name: columns
device: h200
base:
  kernel: flash2
  batch: 1
  heads: 4
  seq: 1024
  head_dim: 64
axes:
  kernel: [flash2, standard]
"""


def sweep(d):
    path = os.path.join(d, "s.yaml")
    with open(path, "w") as f:
        f.write(SWEEP)
    out = os.path.join(d, "s.h5")
    p = subprocess.run([ATTNSIM, "sweep", path, "--out", out, "-j", "1"], capture_output=True, text=True)
    return p, out


def table(path):
    t = h5py.File(path, "r")["table"]
    return {k: (t[k].asstr()[()] if h5py.check_string_dtype(t[k].dtype) else t[k][()]) for k in t}


def test_table_has_occupancy_rates_and_bound():
    with tempfile.TemporaryDirectory() as d:
        p, out = sweep(d)
        assert os.path.exists(out), p.stderr
        t = table(out)
        ok = [i for i, s in enumerate(t["status"]) if s == "ok"]
        assert ok, (t["status"], t["reason"])
        for c in ["launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
                  "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
                  "launch__waves_per_multiprocessor", "sm__maximum_warps_per_active_cycle_pct",
                  "sm__warps_active.avg.pct_of_peak_sustained_active", "attnsim__tflops",
                  "attnsim__pct_peak_flops", "attnsim__dram_gbps", "attnsim__pct_peak_dram"]:
            assert c in t, c
            assert np.all(np.isfinite(t[c][ok])), (c, t[c])
        for i in ok:
            assert t["attnsim__bound"][i] in {"dram", "l2", "smem", "tensor", "issue", "latency"}
            assert t["attnsim__occupancy_limiter"][i] in {"registers", "shared_mem", "warps", "blocks"}
            limits = [t[f"launch__occupancy_limit_{r}"][i] for r in ("registers", "shared_mem", "warps", "blocks")]
            name = t["attnsim__occupancy_limiter"][i]
            assert t[f"launch__occupancy_limit_{name}"][i] == min(limits), (name, limits)
            # GB/s = bytes / ns, and its % of h200's 4800 GB/s.
            gbps = (t["dram__bytes_read.sum"][i] + t["dram__bytes_write.sum"][i]) / t["gpu__time_duration.sum"][i]
            assert abs(t["attnsim__dram_gbps"][i] - gbps) <= 1e-9 * gbps
            assert abs(t["attnsim__pct_peak_dram"][i] - 100 * gbps / 4800) <= 1e-9 * gbps
        # standard attention runs three launches: the longest one's name is recorded.
        std = [i for i in ok if t["kernel"][i] == "standard"]
        assert std and t["attnsim__longest_launch"][std[0]].startswith("standard_"), t["attnsim__longest_launch"]
        r = subprocess.run([sys.executable, CHECK, out], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout


def test_check_h5_rejects_a_version_2_table_without_them():
    with tempfile.TemporaryDirectory() as d:
        _, out = sweep(d)
        with h5py.File(out, "a") as f:
            del f["table/attnsim__bound"]
            del f["table/launch__waves_per_multiprocessor"]
        r = subprocess.run([sys.executable, CHECK, out], capture_output=True, text=True)
        assert r.returncode == 1
        assert "missing /table/attnsim__bound" in r.stdout and "launch__waves_per_multiprocessor" in r.stdout


def test_check_h5_rejects_an_unknown_bound():
    with tempfile.TemporaryDirectory() as d:
        _, out = sweep(d)
        with h5py.File(out, "a") as f:
            n = f["table/attnsim__bound"].shape[0]
            del f["table/attnsim__bound"]
            f["table"].create_dataset("attnsim__bound", data=["compute"] * n, dtype=h5py.string_dtype())
        r = subprocess.run([sys.executable, CHECK, out], capture_output=True, text=True)
        assert r.returncode == 1 and "'compute'" in r.stdout, r.stdout


if __name__ == "__main__":
    import pytest
    sys.exit(pytest.main([__file__, "-q"]))
