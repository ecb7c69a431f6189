#!/usr/bin/python3
"""Prints the FlashAttention Figure 2 (left) table from the fig2_table results: HBM GB and
time of standard attention and FlashAttention (flash1 = Algorithms 1 + 4; flash2 =
FlashAttention-2's kernels), fwd + bwd, at batch 64 (a row run at a smaller batch is scaled by
64 / batch), flash1's B_c and T_c, the per-kernel breakdown of standard attention and flash1,
and the published values beside them.

    /usr/bin/python3 experiments/fig2_table/table.py RESULTS.h5
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402

BATCH = 64  # the published shape
PUBLISHED_GB, PUBLISHED_MS = 4.4, 7.3  # FlashAttention, arXiv version
PUBLISHED = {"standard": "40.3 GB / 41.7 ms (arXiv); 35.3 GB / 35.1 ms (NeurIPS); Alg. 0+3 count ~25.2 GB",
             "flash1": "FlashAttention 4.4 GB / 7.3 ms (arXiv), 11.7 ms (NeurIPS)",
             "flash2": "(FlashAttention-2 kernels; the figure measured FlashAttention-1)"}


def gb(m, scale):
    return (m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)) * scale / 1e9


def flash1_blocks(res, r):
    """(B_r, B_c) of a flash1 row from its sram_bytes (the points store the unresolved workload):
    Algorithm 1's rule as kernels/block_sizes.cpp applies it, M = sram_bytes / 2 fp16 elements."""
    m, d = int(ar.param(res, r, "sram_bytes")) // 2, int(ar.param(res, r, "head_dim"))
    b_c = max(1, -(-m // (4 * d)))
    return min(b_c, d), b_c


def main():
    res = ar.Results(sys.argv[1])
    l2 = res.col("device.l2.capacity_bytes").astype(float)
    print("FlashAttention Fig. 2 left, GPT-2 medium (B=64, H=16, N=1024, d=64, fp16), fwd+bwd, a100-40gb")
    print(f"{'kernel':<9} {'L2':<4} {'B_r x B_c':>10} {'T_c':>4} {'HBM GB':>8} {'vs 4.4':>7} {'time ms':>8} "
          f"{'vs 7.3':>7}   published")
    rows = np.flatnonzero(res.ok())
    scale = {}
    for r in rows:
        k = res.table["kernel"][r]
        scale[r] = BATCH / float(ar.param(res, r, "batch"))
        tot = (res.col("dram__bytes_read.sum")[r] + res.col("dram__bytes_write.sum")[r]) * scale[r] / 1e9
        t = res.col("gpu__time_duration.sum")[r] * scale[r] / 1e6
        bm, bn = flash1_blocks(res, r) if k == "flash1" else (0, 0)
        t_c = math.ceil(int(ar.param(res, r, "seq_kv")) / bn) if bn else ""
        blocks = f"{bm} x {bn}" if bn else ""
        vs = f"{100 * (tot / PUBLISHED_GB - 1):+6.1f}%" if k != "standard" else ""
        vt = f"{100 * (t / PUBLISHED_MS - 1):+6.1f}%" if k != "standard" else ""
        print(f"{k:<9} {'on' if l2[r] else 'off':<4} {blocks:>10} {t_c:>4} {tot:8.3f} "
              f"{vs:>7} {t:8.3f} {vt:>7}   {PUBLISHED.get(k, '')}")
    for r in rows:
        k = res.table["kernel"][r]
        if k not in ("standard", "flash1"):
            continue
        extra = f", B_c {flash1_blocks(res, r)[1]}" if k == "flash1" else ""
        print(f"\n{k} per kernel, L2 {'on' if l2[r] else 'off'}{extra} (GB, ms):")
        for name, m in res.kernels(r):
            print(f"  {name:<22} {gb(m, scale[r]):8.3f} {m.get('gpu__time_duration.sum', 0) * scale[r] / 1e6:8.3f}")
    res.close()


if __name__ == "__main__":
    main()
