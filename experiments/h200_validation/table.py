#!/usr/bin/env python3
# Markdown tables for experiments/h200_validation/README.md from `attnsim compare --json`:
# one row per measured kernel (DRAM read + write, read, write, L2 bytes, time, occupancy limits: relative
# error sim/measured - 1), then the per-metric summary and the time-rank Spearman rho.
# Usage: attnsim compare ... --json | python3 experiments/h200_validation/table.py
import json
import sys

COLS = [("dram__bytes.sum", "DRAM r+w"), ("dram__bytes_read.sum", "DRAM read"), ("dram__bytes_write.sum", "DRAM write"),
        ("lts__t_bytes.sum", "L2 bytes"), ("gpu__time_duration.sum", "time")]
OCC = ["launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
       "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps"]
SHORT = {"nvjet_sm90_hsh_256x128": "QKᵀ nvjet 256×128", "nvjet_sm90_hsh_128x256": "PV nvjet 128×256",
         "nvjet_sm90_hsh_64x512": "PV nvjet 64×512", "softmax_warp_forward": "softmax_warp_forward",
         "cunn_SoftMaxForwardReg": "cunn_SoftMaxForwardReg", "cunn_SoftMaxForwardSmem": "cunn_SoftMaxForwardSmem",
         "flash_fwd_kernel": "flash_fwd_kernel"}


def short(name):
    for k, v in SHORT.items():
        if k in name:
            return v
    return name[:40]


def pct(x):
    return f"{100 * x:+.1f} %"


def main():
    d = json.load(sys.stdin)
    rows = {}
    for r in d["rows"]:
        key = (r["label"], r["kernel_index"])
        rows.setdefault(key, {"kernel": short(r["measured_kernel"]), "sim": r["simulated_kernel"], "m": {}})
        rows[key]["m"][r["metric"]] = r
    print("| row | # | measured kernel | simulated | " + " | ".join(c[1] for c in COLS) +
          " | time meas. / sim. (µs) | occupancy limits (b/r/s/w) meas. → sim. |")
    print("|---|---|---|---|" + "---|" * len(COLS) + "---|---|")
    for (label, k), v in rows.items():
        m = v["m"]
        cells = [pct(m[c]["rel_error"]) if c in m else "–" for c, _ in COLS]
        t = m.get("gpu__time_duration.sum")
        tt = f"{t['measured'] / 1e3:.1f} / {t['simulated'] / 1e3:.1f}" if t else "–"
        occ_m = "/".join(str(int(m[o]["measured"])) if o in m else "?" for o in OCC)
        occ_s = "/".join(str(int(m[o]["simulated"])) if o in m else "?" for o in OCC)
        occ = occ_m if occ_m == occ_s else f"{occ_m} → **{occ_s}**"
        print(f"| {label} | {k} | {v['kernel']} | {v['sim']} | " + " | ".join(cells) + f" | {tt} | {occ} |")
    print()
    print("| metric | n | median abs. rel. error | worst | worst at | target | met |")
    print("|---|---|---|---|---|---|---|")
    for s in d["summary"]:
        tgt = s.get("target")
        tgt_s = "exact" if tgt == 0 else (f"{100 * tgt:.0f} %" if tgt is not None else "–")
        met = "–" if tgt is None else ("yes" if s.get("target_met") else "**no**")
        print(f"| {s['metric']} | {s['count']} | {100 * s['median_rel_error']:.1f} % | "
              f"{100 * s['worst_rel_error']:.1f} % | {s['worst_at']} | {tgt_s} | {met} |")
    print()
    print(f"Spearman ρ of kernel times (measured vs simulated ranking): {d['time_rank_correlation']:.3f}")
    if d.get("unmatched"):
        print()
        print(f"Unmatched measured kernels (no simulated point yet): {len(d['unmatched'])}")
        for u in d["unmatched"]:
            print(f"- {u.split(' ')[0]} kernel {u.split(' kernel ')[1].split(' ')[0]}")


if __name__ == "__main__":
    main()
