#!/usr/bin/env python3
"""A full disk on every HDF5 output path (issue 9, docs/testing.md): `attnsim run --out`,
`attnsim sweep --out` (point journal, snapshots, final file) and `attnsim merge --out` run with
the test-only LD_PRELOAD library libattnsim_enospc_shim.so (tests/app/enospc_shim.c, built next to
the binary), which makes writes under one directory fail with ENOSPC after a byte budget. Each must
exit 2 with "<file>: cannot write: no space left on device", leave no temporary file and no new or
changed output file (a sweep: at most its last snapshot, which passes scripts/check_h5.py), and a
sweep must finish with --resume once there is space, equal to an uninterrupted run and reusing the
points journaled before the disk filled up.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_full_disk.py"""
import os
import re
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_tables import ROOT, binary, differences, fresh_dir, journaled, run, write_sweep  # noqa: E402

SHIM_NAME = "libattnsim_enospc_shim.so"
NOSPACE = "cannot write: no space left on device"
def full_disk_env(directory, budget, log=None):
    """The environment of a process whose disk under `directory` holds `budget` more bytes."""
    env = dict(os.environ)
    shim = os.path.join(os.path.dirname(os.path.abspath(binary())), SHIM_NAME)
    env["LD_PRELOAD"] = shim + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["ATTNSIM_ENOSPC_DIR"] = os.path.realpath(directory)
    env["ATTNSIM_ENOSPC_BYTES"] = str(budget)
    if log:
        env["ATTNSIM_ENOSPC_LOG"] = log
    # An AddressSanitizer build wants its runtime first in the preload list; the shim may precede it.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    return env


def listing(directory):
    """Every file under `directory` (relative paths), with the journal's contents."""
    out = []
    for base, _, files in os.walk(directory):
        out += [os.path.relpath(os.path.join(base, f), directory) for f in files]
    return sorted(out)


def temporaries(directory):
    return [f for f in listing(directory) if ".tmp" in f]


def write_log(log):
    """[(bytes or None if refused, file)] of every write the shim saw, in order."""
    if not os.path.exists(log):
        return []
    out = []
    with open(log) as f:
        for line in f:
            n, path = line.rstrip("\n").split(" ", 1)
            out.append((None if n == "refused" else int(n), path))
    return out


def final_name(path):
    """The file a temporary stands for: out.h5.tmp-<pid> -> out.h5, point-3.rec.tmp -> point-3.rec."""
    return re.sub(r"\.tmp(-\d+)?$", "", path)


def written_in_full(writes):
    """Files (final names) with at least one write that was not cut short by the full disk: the
    write just before a refusal of the same file is the cut one. Counts per file."""
    done = {}
    for i, (n, path) in enumerate(writes):
        if n is None:
            continue
        cut = i + 1 < len(writes) and writes[i + 1] == (None, path)
        if not cut:
            done[final_name(path)] = done.get(final_name(path), 0) + 1
    return done


def refused(stderr):
    m = re.search(r"enospc_shim: (\d+) writes refused", stderr)
    return int(m.group(1)) if m else 0


def check_h5(path):
    r = run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "check_h5.py"), path])
    return r.returncode, (r.stdout + r.stderr).strip()[-300:]


def check_refusal(check, r, target, what):
    """Exit 2, the message naming `target`, and the shim really refused a write."""
    check(r.returncode == 2, f"{what}: exit 2 (rc {r.returncode}) {r.stderr.strip()[-400:]}")
    check(f"{target}: {NOSPACE}" in r.stderr, f"{what}: message names {os.path.basename(target)}")
    check(refused(r.stderr) > 0, f"{what}: the disk was full (the shim refused a write)")
    check("Segmentation" not in r.stderr and "H5Dclose" not in r.stderr and "HDF5-DIAG" not in r.stderr,
          f"{what}: no HDF5 diagnostics or crash on stderr")


def run_case(check, att, tmp):
    d = fresh_dir(tmp, "run")
    out = os.path.join(d, "out.h5")
    cmd = [att, "run", "--device", "teaching", "--kernel", "flash2", "--set", "seq=512", "--set", "head_dim=32",
           "--out", out]
    r = run(cmd)
    check(r.returncode == 0 and os.path.exists(out), f"run --out with room enough (rc {r.returncode})")
    size = os.path.getsize(out)
    os.remove(out)

    r = run(cmd, env=full_disk_env(d, 10 * size))
    check(r.returncode == 0 and check_h5(out)[0] == 0, f"run --out under the shim, budget 10x the file: rc {r.returncode}")
    os.remove(out)

    for budget in (0, size // 2, size - 1):
        r = run(cmd, env=full_disk_env(d, budget))
        check_refusal(check, r, out, f"run --out, {budget} of {size} bytes free")
        check(listing(d) == [], f"run --out, {budget} bytes free: nothing left behind {listing(d)}")

    # An older result stays as it was.
    with open(out, "wb") as f:
        f.write(b"older result")
    r = run(cmd, env=full_disk_env(d, size // 2))
    check_refusal(check, r, out, "run --out over an older file")
    with open(out, "rb") as f:
        check(f.read() == b"older result", "run --out: the older file is unchanged")
    check(listing(d) == ["out.h5"], f"run --out over an older file: no temporary {listing(d)}")


def sweep_cmd(att, sweep, out, resume=False):
    return [att, "sweep", sweep, "--out", out, "-j", "1"] + (["--resume"] if resume else [])


def sweep_case(check, att, tmp):
    d = fresh_dir(tmp, "sweep")
    sweep = os.path.join(tmp, "s.yaml")  # outside the full directory
    # 6 points of ~0.1 s each (a quick test; they are run about 7 times).
    write_sweep(sweep, seqs=(2048,), block_ms=(16, 32), block_ns=(16, 32, 64), batch=2)
    ref = os.path.join(tmp, "ref.h5")
    r = run(sweep_cmd(att, sweep, ref))
    check(r.returncode == 0, f"uninterrupted sweep (rc {r.returncode})")

    # Where the bytes go when there is room: the journal's hash file, an empty snapshot if the first
    # point takes longer than the runner's 100 ms wait, one record per point, a snapshot after the
    # first point, the final file.
    out = os.path.join(d, "out.h5")
    log = os.path.join(tmp, "writes.log")
    r = run(sweep_cmd(att, sweep, out), env=full_disk_env(d, 1 << 40, log))
    check(r.returncode == 0 and not differences(ref, out), f"sweep under the shim with room enough (rc {r.returncode})")
    writes = write_log(log)
    os.remove(out)

    def budget_before(pred, nth=0):
        """Bytes written before the nth write whose file matches `pred`, plus one (a short write)."""
        total, seen = 0, 0
        for n, path in writes:
            if pred(path):
                if seen == nth:
                    return total + 1
                seen += 1
            total += n
        return None

    is_record = lambda p: re.search(r"\.partial/point-\d+\.rec\.tmp$", p) is not None  # noqa: E731
    is_h5 = lambda p: re.search(r"/out\.h5\.tmp-\d+$", p) is not None  # noqa: E731
    cases = [  # where the disk fills up, in the run with room enough
        ("journal's creation", 0),
        ("first point's record", budget_before(is_record, 0)),
        ("first snapshot", budget_before(is_h5, 0)),
        ("third point's record", budget_before(is_record, 2)),
        ("last snapshot (the final file)", sum(n for n, _ in writes[:max(i for i, (_, p) in enumerate(writes) if is_h5(p))]) + 1
         if any(is_h5(p) for _, p in writes) else None),
    ]
    seen = set()
    for where, budget in cases:
        if budget is None:
            check(False, f"sweep: the write log shows the {where}")
            continue
        for leftover in (out, out + ".partial", log):
            subprocess.run(["rm", "-rf", leftover], check=True)
        r = run(sweep_cmd(att, sweep, out), env=full_disk_env(d, budget, log))
        what = f"sweep, disk full at the {where} ({budget} bytes free)"
        # What this run could write (its timing may differ a little from the run above): the
        # message must name the file refused first, the journal hold the records written in full,
        # and a snapshot be there if one was written in full.
        this_run = write_log(log)
        refusals = [p for n, p in this_run if n is None]
        if not refusals:
            check(False, f"{what}: the disk filled up")
            continue
        target = final_name(refusals[0])
        full = written_in_full(this_run)
        records = sum(1 for f in full if re.search(r"/point-\d+\.rec$", f))
        snapshots = full.get(out, 0)
        check_refusal(check, r, target, what)
        check(temporaries(d) == [], f"{what}: no temporary left {temporaries(d)}")
        kept = journaled(out)
        check(kept == records, f"{what}: the journal holds the {records} records written in full ({kept})")
        if target.endswith("sweep_hash"):
            check(not os.path.exists(out + ".partial"), f"{what}: no journal directory left {listing(d)}")
        else:
            m = re.search(r"keeps the (\d+) points finished before it: free some space, then rerun with --resume",
                          r.stderr)
            check(m is not None and int(m.group(1)) == kept,
                  f"{what}: the message counts the {kept} journaled points and says --resume")
        check(os.path.exists(out) == (snapshots > 0),
              f"{what}: {snapshots} snapshot(s) written in full; out.h5 there: {os.path.exists(out)}")
        if os.path.exists(out):
            rc, text = check_h5(out)
            check(rc == 0, f"{what}: the snapshot passes check_h5.py ({text})")
            rows = 0
            try:
                with h5py.File(out, "r") as f:
                    rows, complete = len(f["table/point_index"]), int(f.attrs["complete"])
                check(complete == 0 and rows <= kept, f"{what}: snapshot has complete 0 and {rows} <= {kept} rows")
            except (OSError, KeyError) as e:
                check(False, f"{what}: the snapshot opens with h5py ({e})")
            seen.add(("journal" if target.endswith(".rec") else "h5", kept > 0, rows > 0))
        else:
            seen.add(("hash" if target.endswith("sweep_hash") else "journal" if target.endswith(".rec") else "h5",
                      kept > 0, False))
        # Space is back: --resume finishes, reusing what the journal kept.
        resume = run(sweep_cmd(att, sweep, out, resume=True))
        check(resume.returncode == 0, f"{what}: then --resume exits 0 (rc {resume.returncode}) {resume.stderr[-300:]}")
        if kept:
            check(f"({kept} from the interrupted run)" in resume.stdout,
                  f"{what}: --resume reuses the {kept} journaled points: {resume.stdout.strip()}")
        if resume.returncode == 0:
            diff = differences(ref, out)
            check(not diff, f"{what}: resumed table == uninterrupted table {diff[:5]}")
            check(listing(d) == ["out.h5"], f"{what}: only out.h5 left after --resume {listing(d)}")
    # The cases reached every kind of failure a sweep can meet.
    check(("hash", False, False) in seen, f"sweep: a journal that could not be created {sorted(seen)}")
    check(("journal", True, True) in seen,
          f"sweep: a record refused after points and a snapshot with rows {sorted(seen)}")
    check(("h5", True, True) in seen,
          f"sweep: the results file refused with an older snapshot with rows there {sorted(seen)}")


def merge_case(check, att, tmp):
    d = fresh_dir(tmp, "merge")
    sweep = os.path.join(tmp, "m.yaml")
    write_sweep(sweep, seqs=(256,), block_ms=(16, 32), block_ns=(16, 32))  # 4 points
    shards = []
    for i in range(2):
        shard = os.path.join(tmp, f"shard{i}.h5")
        r = run([att, "sweep", sweep, "--out", shard, "-j", "1", "--shard", f"{i}/2"])
        check(r.returncode == 0, f"shard {i}/2 (rc {r.returncode})")
        shards.append(shard)
    out = os.path.join(d, "merged.h5")
    r = run([att, "merge", "--out", out] + shards)
    check(r.returncode == 0, f"merge with room enough (rc {r.returncode})")
    size = os.path.getsize(out)
    os.remove(out)
    for budget in (0, size // 2):
        r = run([att, "merge", "--out", out] + shards, env=full_disk_env(d, budget))
        check_refusal(check, r, out, f"merge --out, {budget} of {size} bytes free")
        check(listing(d) == [], f"merge --out, {budget} bytes free: nothing left behind {listing(d)}")


def shim_of(att):
    shim = os.path.join(os.path.dirname(os.path.abspath(att)), SHIM_NAME)
    assert os.path.exists(shim), f"{shim} is missing (cmake --build <dir> --target attnsim_enospc_shim)"
    return shim


def test_run_out_on_full_disk(check, attnsim_bin, tmp_path):
    shim_of(attnsim_bin)
    run_case(check, attnsim_bin, str(tmp_path))


def test_sweep_on_full_disk(check, attnsim_bin, tmp_path):
    shim_of(attnsim_bin)
    sweep_case(check, attnsim_bin, str(tmp_path))


def test_merge_on_full_disk(check, attnsim_bin, tmp_path):
    shim_of(attnsim_bin)
    merge_case(check, attnsim_bin, str(tmp_path))


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
