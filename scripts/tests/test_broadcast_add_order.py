"""The eager causal mask's broadcast add keeps one value per thread in flight: its compiled analog's loads follow each store (needs nvcc; skipped without it)."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

HERE = os.path.join(ROOT, "experiments", "h200_validation", "softmax_sass")
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found: the analog cannot be compiled")
def test_broadcast_add_keeps_one_value_in_flight(tmp_path):
    cubin = tmp_path / "broadcast_add.cubin"
    subprocess.run([NVCC, "-arch=sm_90", "-O3", "-cubin", "-o", str(cubin), os.path.join(HERE, "broadcast_add.cu")],
                   check=True, capture_output=True, timeout=300)
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "order.py"), str(cubin)], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    seq = {line.split()[0]: "".join(line.split()[1:]) for line in out.splitlines() if line.strip()}
    legacy = next(v for k, v in seq.items() if "broadcast_add_legacy" in k)
    unrolled = next(v for k, v in seq.items() if "broadcast_add_unrolled" in k)
    assert legacy == "LLS" * 4, legacy      # each value's two loads wait for the store before them
    assert unrolled == "L" * 8 + "S" * 4, unrolled  # the contiguous path's order: all loads first
