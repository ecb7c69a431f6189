#!/usr/bin/env python3
"""scripts/same_results.sh with a binary that adds metrics: the added ones are listed and the workload
counts as the same; a binary that drops or changes a metric the old one reports is different.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_same_results_new_metrics.py"""
import os
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "same_results.sh")
ATTNSIM = os.path.abspath(os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))
WORKLOAD = "--device teaching --kernel flash2 --set batch=1 --set heads=2 --set seq_q=256 --set seq_kv=256 --set head_dim=64\n"

# A wrapper that runs attnsim and edits each kernel's metrics with the Python statement EDIT (on `m`).
WRAPPER = """#!/bin/bash
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in d["kernels"]:
    m = k["metrics"]
    {edit}
json.dump(d, sys.stdout)
'
"""


def wrapper(d, name, edit):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(WRAPPER.format(attnsim=ATTNSIM, edit=edit))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def same_results(d, new):
    lst = os.path.join(d, "w.txt")
    with open(lst, "w") as f:
        f.write(WORKLOAD)
    return subprocess.run(["bash", SCRIPT, "-f", lst, ATTNSIM, new], capture_output=True, text=True)


def test_added_metrics_are_listed_and_the_same():
    with tempfile.TemporaryDirectory() as d:
        r = same_results(d, wrapper(d, "adds.sh", 'm["attnsim__zz_extra"] = 1.0'))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 same, 0 different" in r.stdout and "+1 new metrics: attnsim__zz_extra" in r.stdout, r.stdout


def test_dropped_metric_is_different():
    with tempfile.TemporaryDirectory() as d:
        r = same_results(d, wrapper(d, "drops.sh", 'del m["dram__bytes_read.sum"]'))
        assert r.returncode == 1 and "0 same, 1 different" in r.stdout, r.stdout


def test_changed_metric_is_different():
    with tempfile.TemporaryDirectory() as d:
        r = same_results(d, wrapper(d, "changes.sh", 'm["attnsim__cycles"] += 1'))
        assert r.returncode == 1 and "0 same, 1 different" in r.stdout, r.stdout


if __name__ == "__main__":
    import pytest
    sys.exit(pytest.main([__file__, "-q"]))
