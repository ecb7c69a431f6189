#!/usr/bin/env python3
"""Tests for scripts/check_h5.py: hand-made files (h5py only) that follow or break the schema,
and, when the attnsim binary is available ($ATTNSIM or build/attnsim), a real sweep's output."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "scripts", "check_h5.py")
STR = h5py.string_dtype()


def make(path, drop_attr=None, ragged=False, drop_point=False, bad_metric=False):
    with h5py.File(path, "w") as f:
        for k, v in [("attnsim_version", "0.1.0"), ("git_revision", "x"), ("command_line", "attnsim sweep"),
                     ("created_by", "attnsim"), ("schema_version", 1), ("complete", 1)]:
            if k != drop_attr:
                f.attrs[k] = v
        f.create_dataset("config", data="base: {}\n", dtype=STR)
        t = f.create_group("table")
        t.create_dataset("point_index", data=np.array([0, 1], dtype=np.int64))
        t.create_dataset("status", data=["ok", "impossible"], dtype=STR)
        t.create_dataset("reason", data=["", "constraint"], dtype=STR)
        t.create_dataset("block_m", data=np.array([64, 128] if not ragged else [64], dtype=np.int64))
        name = "dram__bytes_read.sum" if not bad_metric else "dram_bytes__read"
        t.create_dataset(name, data=np.array([1.0, np.nan]))
        for i, ok in [(0, True), (1, False)]:
            if drop_point and i == 0:
                continue
            g = f.create_group(f"points/{i}")
            g.create_dataset("config", data="block_m: 64\n", dtype=STR)
            if ok:
                g.create_dataset("metrics", data=np.zeros(0))
                g.create_dataset("tensors/names", data=["Q"], dtype=STR)
                g.create_dataset("tensors/bytes", data=np.zeros((1, 8), dtype=np.uint64))
                g.create_group("kernels")
                g.create_group("series")


def run_check(path):
    return subprocess.run([sys.executable, CHECK, path], capture_output=True, text=True)


def run_checks():
    """Every check of this file; prints FAIL lines; returns 0 when all passed."""
    failures = []
    with tempfile.TemporaryDirectory() as d:
        cases = [("valid", {}, 0), ("missing git_revision", {"drop_attr": "git_revision"}, 1),
                 ("ragged columns", {"ragged": True}, 1), ("missing ok point group", {"drop_point": True}, 1),
                 ("unknown metric name", {"bad_metric": True}, 1)]
        for name, kw, want in cases:
            p = os.path.join(d, name.replace(" ", "_") + ".h5")
            make(p, **kw)
            r = run_check(p)
            if r.returncode != want:
                failures.append(f"{name}: exit {r.returncode}, expected {want}\n{r.stdout}{r.stderr}")
        attnsim = os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim"))
        if os.path.exists(attnsim):
            sweep = os.path.join(d, "s.yaml")
            with open(sweep, "w") as f:
                f.write("device: teaching\nbase: {kernel: flash2, seq: 128, head_dim: 32}\n"
                        "axes:\n  block_m: [32, 64]\nconstraints:\n  - block_m <= 32\n")
            out = os.path.join(d, "s.h5")
            r = subprocess.run([attnsim, "sweep", sweep, "--out", out, "-j", "2"], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"attnsim sweep failed ({r.returncode}): {r.stderr}")
            else:
                c = run_check(out)
                if c.returncode != 0 or "ok 1" not in c.stdout or "impossible 1" not in c.stdout:
                    failures.append(f"real sweep output: exit {c.returncode}\n{c.stdout}")
        else:
            print(f"note: {attnsim} not built; skipped the real-sweep case")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


def test_check_h5():
    assert run_checks() == 0, "failed checks: the FAIL lines in the captured output"


if __name__ == "__main__":
    sys.exit(1 if run_checks() else 0)
