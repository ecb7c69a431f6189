#!/usr/bin/python3
"""Prints the FlashAttention Figure 2 (left) table from the fig2_table results: HBM GB and
time of standard attention and FlashAttention, fwd + bwd, at batch 64 (the batch-16 sweep's
bytes and time × SCALE; bytes are exactly linear in batch × heads for these kernels), the
per-kernel breakdown of the standard baseline, and the published values beside them.

    /usr/bin/python3 experiments/fig2_table/table.py RESULTS.h5
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402

SCALE = 4  # batch 16 -> batch 64
PUBLISHED = {"standard": "40.3 GB / 41.7 ms (arXiv); 35.3 GB / 35.1 ms (NeurIPS); Alg. 0+3 count ~25.2 GB",
             "flash2": "FlashAttention 4.4 GB / 7.3 ms (arXiv), 11.7 ms (NeurIPS)",
             "flash1": "(forward only; Alg. 1 count with M = 192 KiB: 4.05 GB fwd+bwd)"}


def gb(m):
    return (m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)) * SCALE / 1e9


def main():
    res = ar.Results(sys.argv[1])
    l2 = res.col("device.l2.capacity_bytes").astype(float)
    print(f"FlashAttention Fig. 2 left, GPT-2 medium (B=64, H=16, N=1024, d=64), a100-40gb; "
          f"simulated at batch 16, bytes and time x {SCALE}")
    print(f"{'kernel':<9} {'pass':<7} {'L2':<4} {'HBM GB':>8} {'time ms':>8}   published")
    for r in np.flatnonzero(res.ok()):
        k, p = res.table["kernel"][r], res.table["pass"][r]
        tot = (res.col("dram__bytes_read.sum")[r] + res.col("dram__bytes_write.sum")[r]) * SCALE / 1e9
        t = res.col("gpu__time_duration.sum")[r] * SCALE / 1e6
        print(f"{k:<9} {p:<7} {'on' if l2[r] else 'off':<4} {tot:8.3f} {t:8.3f}   {PUBLISHED.get(k, '')}")
    for r in np.flatnonzero(res.ok()):
        if res.table["kernel"][r] != "standard":
            continue
        print(f"\nstandard attention per kernel, L2 {'on' if l2[r] else 'off'} (GB, ms):")
        for name, m in res.kernels(r):
            print(f"  {name:<22} {gb(m):8.3f} {m.get('gpu__time_duration.sum', 0) * SCALE / 1e6:8.3f}")
    res.close()


if __name__ == "__main__":
    main()
