#!/usr/bin/env python3
"""scripts/sampled_vs_full.py: per-kernel time errors beside the run's, found even where two
kernels' errors cancel in the run's total; --reuse-full takes the full runs from an earlier JSON;
--jitter reports the perturbed full runs' spread and the sampled errors (time, DRAM bytes) against
their medians; the summary has a line over the sampled workloads alone; the busy cycles' and L2 far
hits' errors are reported; the time less its tail ("wave %").
Run: ATTNSIM=build/attnsim /usr/bin/python3 -m pytest scripts/tests/test_sampled_vs_full.py"""
import json
import os
import stat
import subprocess

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "sampled_vs_full.py")
# Three kernels (QK^T, softmax, PV), small enough to take a fraction of a second.
WORKLOAD = "--device h200 --kernel standard --set batch=1 --set heads=2 --set seq=256 --set head_dim=64\n"

# Runs attnsim; in sampled mode the first kernel's time is 10 % longer and the second's 10 % shorter
# (by the first's time), so the run's total stays the same.
WRAPPER = """#!/bin/bash
mode=full
for a in "$@"; do [ "$a" = "sim.mode=sampled" ] && mode=sampled; done
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
if "'$mode'" == "sampled":
    k = d["kernels"]
    dt = 0.1 * k[0]["metrics"]["gpu__time_duration.sum"]
    k[0]["metrics"]["gpu__time_duration.sum"] += dt
    k[1]["metrics"]["gpu__time_duration.sum"] -= dt
json.dump(d, sys.stdout)
'
"""


def run(args):
    p = subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def make_inputs(wrapper_text, attnsim_bin, tmp_path):
    """Writes the wrapper around attnsim and the one-workload list; returns their paths and the JSON path."""
    d = str(tmp_path)
    wrapper = os.path.join(d, "attnsim")
    with open(wrapper, "w") as f:
        f.write(wrapper_text.replace("{attnsim}", os.path.abspath(attnsim_bin)))
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
    lst = os.path.join(d, "w.txt")
    with open(lst, "w") as f:
        f.write(WORKLOAD)
    return wrapper, lst, os.path.join(d, "rows.json")


def test_kernel_errors_that_cancel_in_the_total_are_reported(attnsim_bin, tmp_path):
    wrapper, lst, out_json = make_inputs(WRAPPER, attnsim_bin, tmp_path)
    out = run(["--binary", wrapper, "--json", out_json, lst])
    rows = json.load(open(out_json))
    assert len(rows) == 1, rows
    r = rows[0]
    assert abs(r["time_err"]) < 1e-9, r["time_err"]  # the run's total does not move
    errs = r["kernel_time_errs"]
    assert len(errs) == 3, errs
    assert abs(errs[0] - 0.1) < 1e-9, errs
    assert errs[1] < 0 and errs[2] == 0, errs
    assert "kernels of 1 workloads" in out and "worst" in out, out
    # Reused full runs keep their kernel times.
    out2_json = os.path.join(str(tmp_path), "rows2.json")
    run(["--binary", wrapper, "--reuse-full", out_json, "--json", out2_json, lst])
    assert json.load(open(out2_json))[0]["kernel_time_errs"] == errs



# Full runs report 1000 ns, or 1000 + 10 s^2 ns (scaled back to the 1.98 GHz clock) when the clock
# is moved by s x 1e-7: a chaotic jump, and 1,000,000 + 10,000 s DRAM bytes; the sampled run
# reports 1020 ns, 1,030,000 DRAM bytes and a sampled fraction of one half.
JITTER_WRAPPER = """#!/bin/bash
mode=full; clock=
for a in "$@"; do
  [ "$a" = "sim.mode=sampled" ] && mode=sampled
  case "$a" in device.clock_ghz=*) clock="${a#device.clock_ghz=}";; esac
done
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
mode, clock = "'$mode'", "'$clock'"
step = round((float(clock) / 1.98 - 1) / 1e-7) if clock else 0
t = 1020.0 if mode == "sampled" else (1000.0 + 10 * step ** 2) * (1.98 / float(clock) if clock else 1.0)
d["metrics"]["gpu__time_duration.sum"] = t
d["metrics"]["dram__bytes_read.sum"] = 1030000 if mode == "sampled" else 1000000 + 10000 * step
d["metrics"]["dram__bytes_write.sum"] = 0
if mode == "sampled":
    d["metrics"]["attnsim__sampled_fraction"] = 0.5
json.dump(d, sys.stdout)
'
"""


def test_jitter_reports_the_full_runs_spread_and_the_error_against_their_median(attnsim_bin, tmp_path):
    wrapper, lst, out_json = make_inputs(JITTER_WRAPPER, attnsim_bin, tmp_path)
    out = run(["--binary", wrapper, "--jitter", "4", "--json", out_json, lst])
    r = json.load(open(out_json))[0]
    assert abs(r["time_err"] - 0.02) < 1e-9, r  # against the one unmoved full run
    # Steps +1, -1, +2, -2: 1010, 1010, 1040, 1040; with the unmoved 1000 the median is 1010.
    assert [round(t, 6) for t in r["full_times_jittered"]] == [1010, 1010, 1040, 1040], r
    assert abs(r["full_spread"] - 40 / 1010) < 1e-9, r
    assert abs(r["time_err_vs_median_full"] - (1020 / 1010 - 1)) < 1e-9, r
    assert "full runs spread 3.960 %" in out and "jitter (4 perturbed full runs each, 1 sampled workloads)" in out, out
    # DRAM bytes 1.00, 1.01, 0.99, 1.02, 0.98 M: median 1.00 M, spread 4 %; sampled 3 % above it.
    assert r["full_dram_jittered"] == [1010000, 990000, 1020000, 980000], r
    assert abs(r["full_dram_spread"] - 0.04) < 1e-9, r
    assert abs(r["dram_err_vs_median_full"] - 0.03) < 1e-9, r
    assert "DRAM bytes spread 4.000 %, sampled against their median 3.000 %" in out, out
    assert "DRAM bytes: spread worst 4.000 %, |sampled - median full| worst 3.000 %" in out, out
    # Without --jitter nothing is perturbed.
    run(["--binary", wrapper, "--json", out_json, lst])
    assert "full_spread" not in json.load(open(out_json))[0]


# Two workloads: heads=2 runs in full in sampled mode too (fraction 1, no error); heads=4 is sampled
# (fraction 0.5) and 2 % slow.
MIXED_WRAPPER = """#!/bin/bash
mode=full
for a in "$@"; do [ "$a" = "sim.mode=sampled" ] && mode=sampled; done
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
if "'$mode'" == "sampled" and d["workload"]["heads"] == 4:
    d["metrics"]["gpu__time_duration.sum"] *= 1.02
    d["metrics"]["attnsim__sampled_fraction"] = 0.5
    for k in d["kernels"]:
        k["metrics"]["gpu__time_duration.sum"] *= 1.02
json.dump(d, sys.stdout)
'
"""


def test_summary_over_the_sampled_workloads_alone(attnsim_bin, tmp_path):
    wrapper, lst, out_json = make_inputs(MIXED_WRAPPER, attnsim_bin, tmp_path)
    with open(lst, "a") as f:
        f.write(WORKLOAD.replace("heads=2", "heads=4"))
    out = run(["--binary", wrapper, "--json", out_json, lst])
    rows = json.load(open(out_json))
    assert [r["sampled_fraction"] for r in rows] == [1, 0.5], rows
    assert "2 workloads: |time err| median 1.000 %, worst 2.000 %" in out, out  # 0 and 2 %
    assert "1 sampled workloads (the others ran in full): |time err| median 2.000 %, worst 2.000 %" in out, out
    assert "their kernels median 2.000 %, worst 2.000 %" in out, out


# The sampled run reports DRAM busy cycles 5 % and L2 busy cycles 2 % above the full run's.
BUSY_WRAPPER = """#!/bin/bash
mode=full
for a in "$@"; do [ "$a" = "sim.mode=sampled" ] && mode=sampled; done
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
d["metrics"]["attnsim__dram_busy_cycles"] = 1050.0 if "'$mode'" == "sampled" else 1000.0
d["metrics"]["attnsim__l2_busy_cycles"] = 510.0 if "'$mode'" == "sampled" else 500.0
d["metrics"]["attnsim__l2_far_hits"] = 1100.0 if "'$mode'" == "sampled" else 1000.0
d["metrics"]["attnsim__sampled_fraction"] = 0.5 if "'$mode'" == "sampled" else 1.0
json.dump(d, sys.stdout)
'
"""


def test_busy_cycle_errors_are_reported(attnsim_bin, tmp_path):
    wrapper, lst, out_json = make_inputs(BUSY_WRAPPER, attnsim_bin, tmp_path)
    out = run(["--binary", wrapper, "--json", out_json, lst])
    r = json.load(open(out_json))[0]
    assert abs(r["dram_busy_err"] - 0.05) < 1e-12 and abs(r["l2_busy_err"] - 0.02) < 1e-12, r
    assert r["full"]["attnsim__dram_busy_cycles"] == 1000.0, r
    assert "busy cycles (1 workloads): |DRAM err| median 5.000 %, worst 5.000 %; |L2 err| median 2.000 %" in out, out
    # The L2 far hits (the signature of CTAs placed across both L2 partitions), over sampled rows.
    assert abs(r["far_hits_err"] - 0.10) < 1e-12 and r["full"]["attnsim__l2_far_hits"] == 1000.0, r
    assert "L2 far hits (1 sampled workloads): err median +10.000 %, |err| worst +10.000 %" in out, out
    # Reused full runs keep their busy cycles; rows written before them (no busy metrics) get no error.
    out2 = os.path.join(str(tmp_path), "rows2.json")
    run(["--binary", wrapper, "--reuse-full", out_json, "--json", out2, lst])
    assert abs(json.load(open(out2))[0]["dram_busy_err"] - 0.05) < 1e-12
    old = json.load(open(out_json))
    for row in old:
        for k in ("attnsim__dram_busy_cycles", "attnsim__l2_busy_cycles", "attnsim__l2_far_hits"):
            del row["full"][k]
    with open(out_json, "w") as f:
        json.dump(old, f)
    out3 = run(["--binary", wrapper, "--reuse-full", out_json, "--json", out2, lst])
    assert "dram_busy_err" not in json.load(open(out2))[0] and "busy cycles" not in out3, out3
    assert "far_hits_err" not in json.load(open(out2))[0] and "far hits" not in out3, out3


# The sampled run's last CTA ends later by a tenth of the time (a straggler): its time is 10 %
# longer and its tail share such that the time less the tail is the full run's.
TAIL_WRAPPER = """#!/bin/bash
mode=full
for a in "$@"; do [ "$a" = "sim.mode=sampled" ] && mode=sampled; done
"{attnsim}" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
m = d["metrics"]
if "'$mode'" == "sampled":
    bulk = m["gpu__time_duration.sum"] * (1 - m["attnsim__tail_pct"] / 100)
    m["gpu__time_duration.sum"] *= 1.1
    m["attnsim__tail_pct"] = 100 * (1 - bulk / m["gpu__time_duration.sum"])
json.dump(d, sys.stdout)
'
"""


def test_the_wave_column_leaves_out_the_runs_tails(attnsim_bin, tmp_path):
    wrapper, lst, out_json = make_inputs(TAIL_WRAPPER, attnsim_bin, tmp_path)
    out = run(["--binary", wrapper, "--json", out_json, lst])
    r = json.load(open(out_json))[0]
    assert abs(r["time_err"] - 0.1) < 1e-9, r
    assert abs(r["wave_err"]) < 1e-9, r  # the time less its tail is the same in both runs
    assert "attnsim__tail_pct" in r["full"] and "attnsim__tail_pct" in r["sampled"], r
    assert "the time less its tail (1 workloads" in out and "worst 0.000 %" in out, out
