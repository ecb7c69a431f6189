#!/usr/bin/env python3
"""MPI and job-array sweeps (docs/distributed.md): `mpirun -n 2` and `-n 3` give the single-process
table; shards + merge give it too, and merge refuses missing or duplicate points; a rank killed
with SIGKILL (a worker, or rank 0) leaves a journal that `--resume` in one process completes to the
same table. Skips (passes) when the binary, mpirun or an MPI build is missing.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_mpi_sweep.py"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_tables import binary, differences, fresh_dir, journaled, run, table, wait_for_points, write_sweep  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]
# Under scripts/test.sh --sanitize, LeakSanitizer would report Open MPI's own allocations that it
# never frees (not attnsim's); leak checking stays on for every non-MPI test.
if "detect_leaks=1" in os.environ.get("ASAN_OPTIONS", ""):
    os.environ["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
REPEATS = 6  # runs of each error case (the message was lost in 4 of 40 runs before ranks ended together)


def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def rank_pids(launcher):
    """{rank: pid} of the attnsim processes that our mpirun (pid `launcher`) started, read from
    their environment (never another engineer's job on the same machine)."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK" not in env or "(attnsim)" not in stat:
            continue
        p, ours = int(pid), False
        for _ in range(4):
            p = parent(p)
            ours = ours or p == launcher
        if ours:
            out[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(pid)
    return out


def mpi_sweep(att, n, sweep, out, extra=(), timeout=300):
    return run(MPIRUN + ["-n", str(n), att, "sweep", sweep, "--out", out] + list(extra), timeout=timeout)


def repeat_errors(att, sweep, out, message):
    """REPEATS 3-rank runs expected to fail: their exit codes and how often stderr has `message`."""
    codes, counts = [], []
    for _ in range(REPEATS):
        r = mpi_sweep(att, 3, sweep, out, timeout=120)
        codes.append(r.returncode)
        counts.append(r.stderr.count(message))
    return codes, counts


def kill_rank(att, out, sweep, rank):
    """Starts a 3-rank sweep, SIGKILLs `rank` once 3 points are journaled; (found, mpirun's rc)."""
    p = subprocess.Popen(MPIRUN + ["-n", "3", att, "sweep", sweep, "--out", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = wait_for_points(p, out, 3)
    pids = {}
    for _ in range(100):
        pids = rank_pids(p.pid)
        if rank in pids:
            break
        time.sleep(0.05)
    found = started and rank in pids
    if rank in pids:
        os.kill(pids[rank], signal.SIGKILL)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    return found, p.returncode


def kill_rank_then_resume(check, att, d, sweep, ref, rank):
    out = os.path.join(d, f"killed{rank}.h5")
    # The kill can land after the last point (finding the rank's pid takes a while on a loaded
    # machine: once at 9 of 12 points journaled, the sweep had finished, written its complete file
    # and removed its journal). Then it interrupted nothing: start again, up to 3 times. A file
    # that is not complete still counts as a lost journal.
    for attempt in range(3):
        found, rc = kill_rank(att, out, sweep, rank)
        if journaled(out) or not os.path.exists(out) or table(out)["@complete"] != 1:
            break
        print(f"note: attempt {attempt + 1}: the sweep ended before rank {rank} was killed; again")
        os.remove(out)
    check(found, f"rank {rank} found while the 3-rank sweep runs ({journaled(out)} journaled)")
    check(rc != 0, f"mpirun fails after rank {rank} is killed (rc {rc})")
    kept = journaled(out)
    check(kept >= 3, f"the journal keeps the points finished before the kill ({kept})")
    r = run([att, "sweep", sweep, "--out", out, "--resume", "-j", "1"])
    check(r.returncode == 0, f"--resume in one process completes it (rc {r.returncode}) {r.stderr[-300:]}")
    check("from the interrupted run" in r.stdout, "--resume reuses the journaled points")
    if r.returncode == 0:
        diff = differences(ref, out)
        check(not diff, f"resumed after killing rank {rank} == single process {diff[:5]}")


def test_mpi_sweep(check, attnsim_bin):
    att = attnsim_bin
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    if "built with MPI" not in run([att, "sweep", "--help"]).stdout:
        pytest.skip("attnsim built without MPI")
    with tempfile.TemporaryDirectory() as tmp:
        d = fresh_dir(tmp, "mpi")
        sweep = os.path.join(d, "s.yaml")
        write_sweep(sweep, seqs=(64, 128, 256), block_ms=(16, 32), block_ns=(16, 32, 64))  # 18 points
        ref = os.path.join(d, "ref.h5")
        r = run([att, "sweep", sweep, "--out", ref, "-j", "1"])
        check(r.returncode == 0, f"single-process sweep (rc {r.returncode}) {r.stderr[-300:]}")
        if r.returncode != 0:
            return 1

        for n in (1, 2, 3):
            out = os.path.join(d, f"mpi{n}.h5")
            r = mpi_sweep(att, n, sweep, out)
            check(r.returncode == 0, f"mpirun -n {n} (rc {r.returncode}) {r.stderr[-400:]}")
            if n == 1:
                check("MPI ranks" not in r.stdout, f"-n 1 runs as one plain process: {r.stdout.strip()}")
            else:
                check(f"on {n} MPI ranks" in r.stdout, f"-n {n}: rank 0 reports {n} ranks: {r.stdout.strip()}")
            if r.returncode == 0:
                diff = differences(ref, out)
                check(not diff, f"mpirun -n {n} table == single process {diff[:5]}")
                check(not os.path.exists(out + ".partial"), f"-n {n}: journal removed at the end")

        # A bad sweep file: exit 2 from every rank, no output.
        bad = os.path.join(d, "bad.yaml")
        with open(bad, "w") as f:
            f.write("device: teaching\naxes:\n  block_m: []\n")
        # Repeated: a rank leaving with exit 2 before rank 0 had written its message made mpirun
        # kill rank 0 first in 4 of 40 runs (ranks now end together).
        codes, counts = repeat_errors(att, bad, os.path.join(d, "bad.h5"), "empty axis")
        check(set(codes) == {2}, f"bad sweep file under mpirun -n 3 exits 2 (rc {codes})")
        check(set(counts) == {1}, f"the error is reported once (by rank 0), in {REPEATS} runs ({counts})")
        check(not any(n.startswith("bad.h5") for n in os.listdir(d)), "bad sweep file leaves no output")

        # An error rank 0 finds after the workers started (a journal left without --resume): the
        # workers are released and the message still comes out, once.
        os.makedirs(os.path.join(d, "left.h5.partial"))
        codes, counts = repeat_errors(att, sweep, os.path.join(d, "left.h5"), "pass --resume")
        check(set(codes) == {2}, f"a journal without --resume under mpirun -n 3 exits 2 (rc {codes})")
        check(set(counts) == {1}, f"rank 0 reports it once, in {REPEATS} runs ({counts})")
        check(not os.path.exists(os.path.join(d, "left.h5")), "and writes no output")

        # Ranks that read different sweep texts (no shared file system) refuse together.
        other = os.path.join(d, "other.yaml")
        with open(sweep) as f, open(other, "w") as g:
            g.write(f.read() + "# edited on another node\n")
        mm = os.path.join(d, "mm.h5")
        r = run(MPIRUN + ["-n", "1", att, "sweep", sweep, "--out", mm, ":", "-n", "1", att, "sweep", other, "--out", mm])
        check(r.returncode == 2 and "different contents" in r.stderr and not os.path.exists(mm),
              f"ranks with different sweep files exit 2, no output (rc {r.returncode})")

        # MPI + --resume: a journal from a killed single-process run, finished by 3 ranks.
        part = os.path.join(d, "partial.h5")
        p = subprocess.Popen([att, "sweep", sweep, "--out", part, "-j", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_points(p, part, 4)
        p.kill()
        p.wait()
        before = journaled(part)
        r = mpi_sweep(att, 3, sweep, part, ["--resume"])
        check(r.returncode == 0 and f"({before} from the interrupted run)" in r.stdout,
              f"mpirun -n 3 --resume reuses the {before} journaled points: {r.stdout.strip()} {r.stderr[-300:]}")
        if r.returncode == 0:
            diff = differences(ref, part)
            check(not diff, f"MPI --resume table == single process {diff[:5]}")

        # Job-array shards + merge; shards and MPI combine.
        parts = []
        for i in range(3):
            pth = os.path.join(d, f"part-{i}.h5")
            cmd = [att, "sweep", sweep, "--out", pth, "--shard", f"{i}/3", "-j", "1"]
            r = run(MPIRUN + ["-n", "2"] + cmd if i == 1 else cmd)
            check(r.returncode == 0, f"shard {i}/3{' under mpirun -n 2' if i == 1 else ''} (rc {r.returncode})")
            parts.append(pth)
        merged = os.path.join(d, "merged.h5")
        r = run([att, "merge", "--out", merged] + parts[::-1])
        check(r.returncode == 0, f"merge of 3 shards (rc {r.returncode}) {r.stderr[-300:]}")
        if r.returncode == 0:
            diff = differences(ref, merged)
            check(not diff, f"merged shards == single process {diff[:5]}")
        r = run([att, "merge", "--out", os.path.join(d, "m2.h5"), parts[0], parts[2]])
        check(r.returncode == 2 and "missing" in r.stderr, f"merge refuses a missing shard (rc {r.returncode})")
        r = run([att, "merge", "--out", os.path.join(d, "m3.h5"), parts[0], parts[1], parts[2], parts[1]])
        check(r.returncode == 2 and "more than once" in r.stderr, f"merge refuses duplicate points (rc {r.returncode})")

        # A rank killed mid-run: slower points so that the kill lands mid-sweep.
        slow = os.path.join(d, "slow.yaml")
        write_sweep(slow, seqs=(1024, 2048), block_ms=(16, 32), block_ns=(16, 32, 64), batch=2)  # 12 points
        slow_ref = os.path.join(d, "slow_ref.h5")
        r = run([att, "sweep", slow, "--out", slow_ref, "-j", "2"])
        check(r.returncode == 0, "single-process slow sweep")
        kill_rank_then_resume(check, att, d, slow, slow_ref, rank=1)
        kill_rank_then_resume(check, att, d, slow, slow_ref, rank=0)
        check(table(slow_ref)["@complete"] == 1, "reference complete")


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
