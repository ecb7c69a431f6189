"""Helpers of the sweep crash-safety and MPI tests: locate the attnsim binary, write small sweep
files, run commands, and compare two results files (every /table dataset and every point record)."""
import os
import shutil
import subprocess
import time

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def binary():
    path = os.environ.get("ATTNSIM") or os.path.join(ROOT, "build", "attnsim")
    return path if os.path.exists(path) else None


def write_sweep(path, seqs, block_ms=(16, 32), block_ns=(16, 32), batch=1):
    """A flash2 sweep on the teaching device; cost per point grows with seq."""
    with open(path, "w") as f:
        f.write("name: crash-test\ndevice: teaching\nbase:\n  kernel: flash2\n  head_dim: 32\n"
                f"  batch: {batch}\n  heads: 2\n"
                f"axes:\n  seq: [{', '.join(map(str, seqs))}]\n"
                f"  block_m: [{', '.join(map(str, block_ms))}]\n"
                f"  block_n: [{', '.join(map(str, block_ns))}]\n")


def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def table(path):
    """{dataset name: numpy array} of /table plus {"record <i>": text} of every point."""
    out = {}
    with h5py.File(path, "r") as f:
        for name, ds in f["table"].items():
            out[name] = ds[()]
        for i, g in f["points"].items():
            out["record " + i] = g["record"][()]
        out["@complete"] = int(f.attrs["complete"])
    return out


def differences(a_path, b_path):
    """Names of what differs between two results files (empty: identical data)."""
    a, b = table(a_path), table(b_path)
    diffs = sorted(set(a) ^ set(b))
    for k in sorted(set(a) & set(b)):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            diffs.append(k)
        elif x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                diffs.append(k)
        elif not np.array_equal(x, y):
            diffs.append(k)
    return diffs


def journaled(out_path):
    d = out_path + ".partial"
    try:
        return sum(1 for n in os.listdir(d) if n.startswith("point-") and n.endswith(".rec"))
    except FileNotFoundError:
        return 0


def wait_for_points(proc, out_path, n, timeout=120):
    """Waits until `n` points are journaled; False if the process ended first or time ran out."""
    end = time.time() + timeout
    while time.time() < end:
        if journaled(out_path) >= n:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def fresh_dir(tmp, name):
    d = os.path.join(tmp, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
