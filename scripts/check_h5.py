#!/usr/bin/env python3
"""Validate an attnsim results file against docs/hdf5-schema.md and print a summary.

usage: /usr/bin/python3 scripts/check_h5.py FILE.h5
Exit 0 when the file follows the schema, 1 on a violation (each one printed), 2 on bad usage.
Needs only h5py and numpy (no attnsim code).
"""
import re
import sys

import h5py

REQUIRED_ATTRS = ["attnsim_version", "git_revision", "command_line", "created_by", "schema_version"]
FIXED_COLUMNS = ["point_index", "status", "reason"]
STATUSES = {"ok", "impossible", "error"}
TENSOR_COLUMNS = ["dram_read", "dram_write", "lts_read", "lts_write", "l1_read", "l1_write", "smem_read", "smem_write"]
# Nsight Compute metric names (docs/metrics.md) and attnsim's own, under the same naming rule.
KNOWN_METRIC = re.compile(
    r"^(dram__|lts__|gpu__|sm__|launch__|l1tex__|smsp__|attnsim__)[A-Za-z0-9_.]+$")
# Schema version 2 promises these columns in every results table with an ok row: the longest
# launch's occupancy (limits, waves, theoretical and achieved, limiter) and the run's rates and bound.
V2_COLUMNS = ["launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
              "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
              "launch__waves_per_multiprocessor", "sm__maximum_warps_per_active_cycle_pct",
              "sm__warps_active.avg.pct_of_peak_sustained_active", "attnsim__occupancy_limiter",
              "attnsim__tflops", "attnsim__pct_peak_flops", "attnsim__dram_gbps", "attnsim__pct_peak_dram",
              "attnsim__bound"]
BOUNDS = {"dram", "l2", "smem", "tensor", "issue", "latency"}
LIMITERS = {"registers", "shared_mem", "warps", "blocks"}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check(path):
    problems = []
    with h5py.File(path, "r") as f:
        for a in REQUIRED_ATTRS:
            if a not in f.attrs:
                problems.append(f"missing root attribute {a}")
        if "config" not in f:
            problems.append("missing /config")
        if "table" not in f:
            problems.append("missing /table")
            return problems, {}
        t = f["table"]
        lengths = {k: t[k].shape[0] if t[k].ndim == 1 else -1 for k in t}
        for k, n in lengths.items():
            if n < 0:
                problems.append(f"/table/{k} is not 1-D")
        if len(set(lengths.values())) > 1:
            problems.append(f"table columns differ in length: {lengths}")
        rows = next(iter(lengths.values())) if lengths else 0
        summary = {"rows": rows, "columns": len(lengths)}
        is_results = "points" in f or "status" in t
        if is_results:
            for c in FIXED_COLUMNS:
                if c not in t:
                    problems.append(f"missing /table/{c}")
            if problems:
                return problems, summary
            status = [text(s) for s in t["status"][()]]
            index = list(t["point_index"][()])
            bad = sorted(set(status) - STATUSES)
            if bad:
                problems.append(f"unknown status values {bad}")
            if index != sorted(index) or len(set(index)) != len(index):
                problems.append("point_index is not strictly increasing")
            for k in t:
                if "__" in k and not KNOWN_METRIC.match(k):
                    problems.append(f"unknown metric column {k}")
            if int(f.attrs.get("schema_version", 1)) >= 2 and "ok" in status:
                for c in V2_COLUMNS:
                    if c not in t:
                        problems.append(f"missing /table/{c} (schema version 2)")
                for c, allowed in (("attnsim__bound", BOUNDS), ("attnsim__occupancy_limiter", LIMITERS)):
                    if c not in t:
                        continue
                    for row, (v, s) in enumerate(zip(t[c][()], status)):
                        v = text(v)
                        if (s == "ok" and v not in allowed) or (s != "ok" and v != ""):
                            problems.append(f"/table/{c}[{row}] = {v!r} in a row with status {s}")
                            break
            for i, s in zip(index, status):
                g = f"points/{i}"
                if g not in f:
                    problems.append(f"missing /{g} for table row {i}")
                    continue
                if "config" not in f[g]:
                    problems.append(f"missing /{g}/config")
                if s != "ok":
                    continue
                for sub in ["metrics", "tensors/names", "tensors/bytes", "kernels", "series"]:
                    if sub not in f[g]:
                        problems.append(f"missing /{g}/{sub}")
                if "tensors/bytes" in f[g] and "tensors/names" in f[g]:
                    b = f[g]["tensors/bytes"]
                    if b.ndim != 2 or b.shape != (f[g]["tensors/names"].shape[0], len(TENSOR_COLUMNS)):
                        problems.append(f"/{g}/tensors/bytes has shape {b.shape}")
            for s in STATUSES:
                summary[s] = status.count(s)
            summary["complete"] = int(f.attrs.get("complete", 1))
    return problems, summary


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        problems, summary = check(argv[1])
    except OSError as e:
        print(f"{argv[1]}: cannot read: {e}")
        return 1
    for p in problems:
        print(f"{argv[1]}: {p}")
    print(f"{argv[1]}: " + ", ".join(f"{k} {v}" for k, v in summary.items()) +
          (" -- OK" if not problems else f" -- {len(problems)} violation(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
