"""scripts/random_workloads.py: the same seed gives the same list, every line is a workload the binary
accepts within the event cap, and a binary that cannot be run is exit 2.
Run: /usr/bin/python3 -m pytest scripts/tests/test_random_workloads.py"""
import os
import re
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "random_workloads.py")


def listing(binary, seed, n=4, cap="3e5"):
    p = subprocess.run([sys.executable, SCRIPT, "--binary", binary, "-n", str(n), "--seed", str(seed),
                        "--max-events", cap], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_same_seed_same_list_of_accepted_workloads(attnsim_bin):
    a = listing(attnsim_bin, 7)
    assert a == listing(attnsim_bin, 7)
    assert a != listing(attnsim_bin, 8)
    assert a[0].startswith("# 4 random workloads, --seed 7") and len(a) == 5
    for line in a[1:]:
        args = line.split()
        p = subprocess.run([attnsim_bin, "run", *args, "--max-memory", "1"], capture_output=True, text=True)
        m = re.search(r"~([0-9.e+]+) events", p.stderr)
        assert p.returncode == 2 and "--max-memory: refusing to run" in p.stderr and m, (line, p.stderr)
        assert float(m.group(1)) <= 3e5, line


def test_a_binary_that_cannot_run_is_exit_2(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT, "--binary", str(tmp_path / "none"), "-n", "1"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "cannot run" in p.stderr
