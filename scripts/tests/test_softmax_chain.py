"""The row-softmax tables of kernels/standard.cpp are what chain.py reads from the compiled analogs (needs nvcc; skipped without it)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

HERE = os.path.join(ROOT, "experiments", "h200_validation", "softmax_sass")
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)


def cpp_tables():
    """{kernel: {values per thread: (round trips, chain)}} from the chain_at({...}) calls, in order."""
    src = open(os.path.join(ROOT, "kernels", "standard.cpp"), encoding="utf-8").read()
    calls = re.findall(r"chain_at\(\{((?:\{\d+, \d+, \d+\},?\s*)+)\}", src)
    assert len(calls) == 4, "expected the Smem, three-pass, warp and Reg tables in kernels/standard.cpp"
    tables = {}
    for kernel, body in zip(("row_softmax_smem", "row_softmax_block", "row_softmax_warp", "row_softmax_reg"), calls):
        points = re.findall(r"\{(\d+), (\d+), (\d+)\}", body)
        assert len(points) >= 2, f"{kernel}: table not parsed"
        tables[kernel] = {int(p): (int(t), int(c)) for p, t, c in points}
    return tables


@pytest.mark.skipif(NVCC is None, reason="nvcc not found: the analogs cannot be compiled")
def test_standard_cpp_tables_are_chain_py_readings(tmp_path):
    cubin = tmp_path / "analogs.cubin"
    subprocess.run([NVCC, "-arch=sm_90", "-O3", "-cubin", "-o", str(cubin), os.path.join(HERE, "softmax_analogs.cu")],
                   check=True, capture_output=True, timeout=300)
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "chain.py"), str(cubin), "--sketch"], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    read = {}
    for line in out.splitlines():
        m = re.match(r"(row_softmax_\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", line.strip())
        if m:
            read.setdefault(m.group(1), {})[int(m.group(2))] = (int(m.group(4)), int(m.group(5)))
    tables = cpp_tables()
    for kernel, points in tables.items():
        for per, value in points.items():
            assert read.get(kernel, {}).get(per) == value, f"{kernel} at {per} values per thread: standard.cpp {value}, chain.py {read.get(kernel, {}).get(per)}"
    # The sketch prints one lifetime per kernels.csv configuration.
    assert len(re.findall(r"k cycles\s+measured", out)) == 5, out


@pytest.mark.skipif(NVCC is None, reason="nvcc not found: the analogs cannot be compiled")
def test_issue_slots_bind_before_the_alu_pipe(tmp_path):
    """docs/accuracy.md (open items): in every row kernel the issue slots bind before the ALU pipe,
    even with every unidentified opcode counted on it (pipes.py)."""
    cubin = tmp_path / "analogs.cubin"
    subprocess.run([NVCC, "-arch=sm_90", "-O3", "-cubin", "-o", str(cubin), os.path.join(HERE, "softmax_analogs.cu")],
                   check=True, capture_output=True, timeout=300)
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "pipes.py"), str(cubin)], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    rows = [line.split() for line in out.splitlines() if line.startswith("row_softmax_")]
    assert [r[0] for r in rows] == ["row_softmax_warp", "row_softmax_reg", "row_softmax_smem", "row_softmax_block"], out
    for r in rows:
        alu, fma, mufu, issue = (float(x) for x in r[-4:])
        assert issue > max(alu, fma, mufu), f"{r[0]}: {out}"
