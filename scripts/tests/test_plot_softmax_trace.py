#!/usr/bin/python3
"""Checks scripts/plot_softmax_trace.py: it writes a non-empty PNG, SVG and PDF from a trace
file, runs the attnsim binary ($ATTNSIM) when one is given, and rejects bad input.
Exits non-zero on the first failure."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "plot_softmax_trace.py")
PY = "/usr/bin/python3"

# The lesson's example, 1,3,2,5,4,0,6,2 in blocks of 4 (values from the closed forms).
TRACE = {
    "block": 4,
    "blocks": [
        {"index": 1, "scores": [1, 3, 2, 5], "m_old": None, "m": 5, "l": 1.2034379904932109,
         "rescale": None, "max_grew": True},
        {"index": 2, "scores": [4, 0, 6, 2], "m_old": 5, "m": 6, "l": 1.598849769729139,
         "rescale": 0.36787944117144233, "max_grew": True},
    ],
    "softmax": [0.0042142, 0.0311393, 0.0114555, 0.2300901, 0.0846454, 0.0015503, 0.6254496, 0.0114555],
    "direct_softmax": [0.0042142, 0.0311393, 0.0114555, 0.2300901, 0.0846454, 0.0015503, 0.6254496,
                       0.0114555],
    "max_abs_difference": 0,
}

MAGIC = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}


def run(args, env=None):
    return subprocess.run([PY, SCRIPT] + args, capture_output=True, text=True, env=env)


def check_figure(path, ext):
    if not os.path.isfile(path):
        raise AssertionError("%s was not written" % path)
    with open(path, "rb") as f:
        head = f.read(16)
    if os.path.getsize(path) == 0 or not head.startswith(MAGIC[ext]):
        raise AssertionError("%s is empty or not a %s file" % (path, ext))


def run_checks():
    """Every check of this file; prints FAIL lines; returns 0 when all passed."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        trace_path = os.path.join(tmp, "trace.json")
        with open(trace_path, "w", encoding="utf-8") as f:
            json.dump(TRACE, f)
        for ext in (".png", ".svg", ".pdf"):
            out = os.path.join(tmp, "trace" + ext)
            proc = run(["--input", trace_path, "--out", out])
            try:
                if proc.returncode != 0:
                    raise AssertionError("exit %d: %s" % (proc.returncode, proc.stderr))
                check_figure(out, ext)
                print("ok   from file -> %s" % ext)
            except AssertionError as e:
                failures += 1
                print("FAIL from file -> %s: %s" % (ext, e))

        binary = os.environ.get("ATTNSIM")
        if binary and os.access(binary, os.X_OK):
            out = os.path.join(tmp, "run.png")
            proc = run(["--attnsim", binary, "--scores", "1,3,2,5,4,0,6,2", "--block", "3", "--out", out])
            try:
                if proc.returncode != 0:
                    raise AssertionError("exit %d: %s" % (proc.returncode, proc.stderr))
                check_figure(out, ".png")
                print("ok   from %s" % binary)
            except AssertionError as e:
                failures += 1
                print("FAIL from %s: %s" % (binary, e))
        else:
            print("skip running attnsim ($ATTNSIM not set or not executable)")

        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            json.dump({"block": 4}, f)
        for args, what in ((["--input", bad, "--out", os.path.join(tmp, "bad.png")], "trace without blocks"),
                           (["--input", trace_path, "--out", os.path.join(tmp, "fig.txt")], "unknown extension")):
            proc = run(args)
            if proc.returncode == 0:
                failures += 1
                print("FAIL %s was accepted" % what)
            else:
                print("ok   %s rejected" % what)
        if os.path.exists(os.path.join(tmp, "bad.png")):
            failures += 1
            print("FAIL a figure was written for a bad trace")
    print("%d failure(s)" % failures)
    return 1 if failures else 0


def test_plot_softmax_trace():
    assert run_checks() == 0, "failed checks: the FAIL lines in the captured output"


if __name__ == "__main__":
    sys.exit(1 if run_checks() else 0)
