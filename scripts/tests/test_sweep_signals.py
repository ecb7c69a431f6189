#!/usr/bin/env python3
"""Crash safety of `attnsim sweep` as a real process (docs/hdf5-schema.md): SIGKILL after the
first points are journaled, then --resume, equals an uninterrupted run; SIGINT exits 130 after
making the points in flight durable, leaves a readable snapshot (complete = 0), and --resume
completes it to the same table; a second SIGINT ends the process at once.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_sweep_signals.py"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_tables import binary, differences, fresh_dir, journaled, run, wait_for_points, write_sweep  # noqa: E402

def start(att, sweep, out, extra=()):
    return subprocess.Popen([att, "sweep", sweep, "--out", out, "-j", "1"] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_delivered(pid, sig, timeout=30):
    """Waits until `sig` is no longer pending for process `pid` (Linux /proc): two signals sent
    while the process is not running (a loaded machine, a slow sanitized build) merge into one."""
    bit = 1 << (sig - 1)
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except FileNotFoundError:
            return
        if "ShdPnd" not in fields:
            return
        if not (int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)) & bit:
            return
        time.sleep(0.005)


def resume_matches(check, att, sweep, out, ref, what):
    r = run([att, "sweep", sweep, "--out", out, "--resume", "-j", "2"])
    check(r.returncode == 0, f"{what}: --resume exits 0 (rc {r.returncode}) {r.stderr[-300:]}")
    check("from the interrupted run" in r.stdout, f"{what}: --resume reuses journaled points: {r.stdout.strip()}")
    if r.returncode == 0:
        diff = differences(ref, out)
        check(not diff, f"{what}: resumed table == uninterrupted table {diff[:5]}")
        check(not os.path.exists(out + ".partial"), f"{what}: journal removed")


def test_sweep_signals(check, attnsim_bin):
    att = attnsim_bin
    with tempfile.TemporaryDirectory() as tmp:
        d = fresh_dir(tmp, "signals")
        sweep = os.path.join(d, "s.yaml")
        # 12 points of about 0.27 s each with -j 1, so that SIGKILL lands while points are left even when
        # the poller is slow (a loaded machine once saw all 12 journaled with seq 1024 and 2048).
        write_sweep(sweep, seqs=(2048, 4096), block_ms=(16, 32), block_ns=(16, 32, 64), batch=2)
        ref = os.path.join(d, "ref.h5")
        r = run([att, "sweep", sweep, "--out", ref, "-j", "2"])
        check(r.returncode == 0, f"uninterrupted sweep (rc {r.returncode})")
        if r.returncode != 0:
            return 1

        # SIGKILL after two points are durable.
        out = os.path.join(d, "kill.h5")
        p = start(att, sweep, out)
        check(wait_for_points(p, out, 2), "two points journaled before SIGKILL")
        p.send_signal(signal.SIGKILL)
        p.communicate()
        check(p.returncode == -signal.SIGKILL, f"killed by SIGKILL (rc {p.returncode})")
        kept = journaled(out)
        check(2 <= kept < 12, f"journal keeps the finished points ({kept} of 12)")
        r = run([att, "sweep", sweep, "--out", out, "-j", "1"])
        check(r.returncode == 2 and "--resume" in r.stderr, "without --resume the journal is refused (exit 2)")
        resume_matches(check, att, sweep, out, ref, "SIGKILL")

        # SIGINT: finish the point in flight, snapshot, exit 130.
        out = os.path.join(d, "int.h5")
        p = start(att, sweep, out)
        check(wait_for_points(p, out, 1), "one point journaled before SIGINT")
        at_signal = journaled(out)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        check(p.returncode == 130, f"SIGINT exits 130 (rc {p.returncode}) {err[-300:]}")
        check("--resume" in err, "the message says how to continue")
        kept = journaled(out)
        check(kept >= at_signal and kept < 12, f"points in flight made durable ({at_signal} -> {kept})")
        try:
            with h5py.File(out, "r") as f:
                rows = len(f["table/point_index"])
                complete = int(f.attrs["complete"])
            check(complete == 0 and rows == kept, f"readable snapshot: complete 0, {rows} rows == {kept} journaled")
        except OSError as e:
            check(False, f"readable snapshot after SIGINT ({e})")
        resume_matches(check, att, sweep, out, ref, "SIGINT")

        # A second SIGINT does not wait for the point in flight (several seconds of CPU: it cannot
        # finish between the two signals).
        out = os.path.join(d, "int2.h5")
        big = os.path.join(d, "big.yaml")
        write_sweep(big, seqs=(4096,), block_ms=(16,), block_ns=(16,), batch=16)
        p = start(att, big, out)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        wait_delivered(p.pid, signal.SIGINT)
        time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=120)
        check(p.returncode == -signal.SIGINT, f"second SIGINT ends the sweep at once (rc {p.returncode})")


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
