#!/usr/bin/env python3
"""scripts/same_results.sh, the exactness check for engine changes: one binary against itself is
the same on every workload (exit 0); against a wrapper that changes the device (the L2 off) every
workload differs (exit 1); a binary that fails counts as different; bad usage exits 2.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_same_results.py"""
import os
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "same_results.sh")
ATTNSIM = os.path.abspath(os.environ.get("ATTNSIM", os.path.join(ROOT, "build", "attnsim")))

def run(*args):
    p = subprocess.run(["bash", SCRIPT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def test_same_results(check):
    with tempfile.TemporaryDirectory() as d:
        workloads = os.path.join(d, "workloads.txt")
        with open(workloads, "w") as f:
            f.write("# two small workloads\n"
                    "--device h200 --kernel stream_read --set programs=33 --set total_bytes=8388608\n"
                    "\n"
                    "--device teaching --kernel flash2 --set batch=1 --set heads=2 --set seq_q=256"
                    " --set seq_kv=256 --set head_dim=64  # the teaching device\n")
        l2_off = executable(os.path.join(d, "l2_off.sh"),
                            f'#!/bin/bash\nexec "{ATTNSIM}" "$@" --set device.l2.capacity_bytes=0\n')
        failing = executable(os.path.join(d, "failing.sh"), "#!/bin/bash\necho broken >&2\nexit 3\n")

        rc, out, err = run("-f", workloads, ATTNSIM, ATTNSIM)
        check(rc == 0, f"same binary: exit 0 (got {rc}; {err.strip()})")
        check(out.count("same  --device") == 2 and "2 same, 0 different" in out, "same binary: both workloads the same")

        rc, out, _ = run("-f", workloads, ATTNSIM, l2_off)
        check(rc == 1, f"L2 off: exit 1 (got {rc})")
        check(out.count("DIFF  --device") == 2 and "0 same, 2 different" in out, "L2 off: both workloads differ")

        rc, out, _ = run("-f", workloads, ATTNSIM, failing)
        check(rc == 1, f"failing binary: exit 1 (got {rc})")
        check("FAILED rc=3: broken" in out, "failing binary: its exit status and message are shown")

        rc, _, err = run(ATTNSIM)
        check(rc == 2 and "usage:" in err, f"one binary: usage, exit 2 (got {rc})")
        rc, _, err = run("-f", os.path.join(d, "missing.txt"), ATTNSIM, ATTNSIM)
        check(rc == 2 and "usage:" in err, f"unreadable list: usage, exit 2 (got {rc})")
        rc, _, err = run(ATTNSIM, os.path.join(d, "no-such-binary"))
        check(rc == 2 and "not an executable" in err, f"missing binary: exit 2 (got {rc})")


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
