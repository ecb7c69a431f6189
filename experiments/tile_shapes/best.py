#!/usr/bin/python3
"""Ranks the tile_shapes points by simulated time and prints, for each, the tile, stages,
warps, CTAs per SM with the limiting resource, theoretical/achieved occupancy, L2 and DRAM
bytes. --index prints only the fastest point's index (for plot_timeline.py --point).

    /usr/bin/python3 experiments/tile_shapes/best.py RESULTS.h5 [--index]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnsim_results as ar  # noqa: E402

LIMITS = ("registers", "shared_mem", "warps", "blocks")


def fastest_point(res):
    """Point index of the fastest ok point."""
    ok = np.flatnonzero(res.ok())
    t = res.col("gpu__time_duration.sum").astype(float)
    return res.point_index(int(ok[np.argsort(t[ok], kind="stable")][0]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    res = ar.Results(argv[0])
    ok = np.flatnonzero(res.ok())
    t = res.col("gpu__time_duration.sum").astype(float)
    order = ok[np.argsort(t[ok], kind="stable")]
    if "--index" in argv:
        print(fastest_point(res))
        res.close()
        return 0
    occ = ar.achieved_occupancy(res)
    l2 = res.col("lts__t_bytes.sum").astype(float)
    dram = ar.dram_bytes(res)
    print(f"{'rank':>4} {'#':>3} {'tile':>9} {'st':>2} {'wp':>2} {'CTA/SM':>6} {'limit':<20} {'theo%':>5} "
          f"{'ach%':>5} {'L2 MB':>8} {'DRAM MB':>8} {'time us':>8}")
    for rank, r in enumerate(order, 1):
        m = max((km for _, km in res.kernels(r)), key=lambda k: k.get("gpu__time_duration.sum", 0.0))
        lim = {k: m.get("launch__occupancy_limit_" + k, np.nan) for k in LIMITS}
        lo = min(lim.values())
        who = "+".join(k for k, v in lim.items() if v == lo)
        tile = f"{res.table['block_m'][r]}x{res.table['block_n'][r]}"
        print(f"{rank:>4} {res.point_index(r):>3} {tile:>9} {res.table['stages'][r]:>2} {res.table['warps'][r]:>2} "
              f"{lo:>6.0f} {who:<20} {m.get('sm__maximum_warps_per_active_cycle_pct', np.nan):>5.1f} {occ[r]:>5.1f} "
              f"{l2[r] / 1e6:>8.1f} {dram[r] / 1e6:>8.1f} {t[r] / 1e3:>8.1f}")
    n_imp = int(np.sum(res.status() == "impossible"))
    print(f"{len(ok)} ok points ranked; {n_imp} impossible (tiles over the shared-memory limit)")
    res.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
