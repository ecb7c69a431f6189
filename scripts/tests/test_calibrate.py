#!/usr/bin/env python3
"""scripts/calibrate.py, the microbenchmark check of a device preset (docs/calibration.md step 5):
measurements equal to the simulator's own results are all within tolerance (exit 0, 0.0 %
errors); one stream point off by 30 % is the one flagged (exit 1); the H200 reference's pointer
chase fits the h200 preset; the starting values follow the recipe's formulas; bad input exits 2
naming the file and key.
Run: ATTNSIM=build/attnsim /usr/bin/python3 scripts/tests/test_calibrate.py"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "calibrate.py")
REFERENCE = os.path.join(ROOT, "tests", "data", "reference", "microbench.json")

def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_calibrate(check):
    with tempfile.TemporaryDirectory() as d:
        # Two chase and three stream points of the reference layout, measured values still unknown (1.0).
        doc = {
            "pointer_chase": {"points": [{"working_set_MiB": 0.125, "cycles_per_load": 1.0},
                                         {"working_set_MiB": 256, "cycles_per_load": 1.0}]},
            "stream_read": {"points": [{"programs": 1, "warps": 4, "bytes_per_step": 16384, "GBps": 1.0},
                                       {"programs": 33, "warps": 4, "bytes_per_step": 4096, "GBps": 1.0},
                                       {"programs": 528, "warps": 4, "bytes_per_step": 1024, "GBps": 1.0}]},
        }
        rc, out, err = run("--device", "h200", "--measured", write(os.path.join(d, "ones.json"), doc), "--json", "-j", "2")
        check(rc == 1, f"placeholder measurements are far off: exit 1 (got {rc}; {err.strip()})")
        sim = [p["simulated"] for p in json.loads(out)["points"]] if rc == 1 else [1.0] * 5
        check(len(sim) == 5 and 30 < sim[0] < 60 and 500 < sim[1] < 900, f"simulated L1 and DRAM chase plateaus: {sim[:2]}")

        for p, v in zip(doc["pointer_chase"]["points"] + doc["stream_read"]["points"], sim):
            p["cycles_per_load" if "cycles_per_load" in p else "GBps"] = v
        rc, out, err = run("--device", "h200", "--measured", write(os.path.join(d, "self.json"), doc), "--json")
        res = json.loads(out) if out else {"points": []}
        check(rc == 0, f"the simulator's own results as measurements: exit 0 (got {rc}; {err.strip()})")
        check(res.get("within") == 5 and all(abs(p["error"]) < 1e-9 for p in res["points"]),
              "the simulator's own results: 5/5 within, every error 0")

        doc["stream_read"]["points"][1]["GBps"] *= 1.3
        rc, out, _ = run("--device", "h200", "--measured", write(os.path.join(d, "off.json"), doc))
        flagged = [l for l in out.splitlines() if "NO (tolerance 15%)" in l]
        check(rc == 1, f"one stream point 30 % above the simulation: exit 1 (got {rc})")
        check(len(flagged) == 1 and "4096 B x 33 CTAs" in flagged[0] and "-23.1%" in flagged[0],
              f"only that point is flagged, at -23.1 %: {flagged}")
        check("stream: 2/3 within 15%" in out and "chase: 2/2 within 10%" in out, "per-kind summary lines")
        rc, out, _ = run("--device", "h200", "--measured", os.path.join(d, "off.json"), "--stream-tolerance", "0.25")
        check(rc == 0, f"the same point inside a 25 % tolerance: exit 0 (got {rc})")
        rc, out, _ = run("--device", "h200", "--measured", os.path.join(d, "off.json"),
                         "--set", "device.hbm.latency_cycles=900", "--only", "chase")
        check(rc == 1 and "256 MiB" in next((l for l in out.splitlines() if "NO" in l), ""),
              f"--set reaches attnsim: a 900-cycle HBM latency moves the DRAM plateau out (exit {rc})")

        # The H200 reference: the chase plateaus fit the h200 preset (as Calibration.PointerChase* checks).
        rc, out, err = run("--device", "h200", "--measured", REFERENCE, "--only", "chase", "--json")
        res = json.loads(out) if out else {}
        check(rc == 0 and res.get("within") == 8, f"H200 reference chase: 8/8 within 10 % (exit {rc}; {err.strip()})")
        start = {s["key"]: s for s in res.get("starting_values", [])}
        ref = json.load(open(REFERENCE))
        cpl = {p["working_set_MiB"]: p["cycles_per_load"] for p in ref["pointer_chase"]["points"]}
        check(abs(start["sm.l1_hit_latency_cycles"]["from_measurements"] - cpl[0.125]) < 1e-9
              and start["sm.l1_hit_latency_cycles"]["preset"] == "42", "L1 latency: the smallest working set; preset 42")
        dram = sorted(cpl[m] for m in (256, 1024))  # 4x the 60 MiB L2 and more
        check(abs(start["hbm.latency_cycles"]["from_measurements"] - sum(dram) / 2) < 1e-9, "HBM latency: median of >= 4x L2")
        one = max((p for p in ref["stream_read"]["points"] if p["programs"] == 1), key=lambda p: p["bytes_per_step"])
        want = one["GBps"] / 1.98 * (sum(dram) / 2) / 4
        check(abs(start["sm.max_inflight_bytes_per_warp"]["from_measurements"] - want) < 1e-6,
              f"in-flight bytes per warp: 1-CTA B/cycle x latency / warps = {want:.1f}")

        # Bad input: exit 2, the file and key named, nothing on stdout.
        rc, out, err = run("--device", "h200", "--measured", os.path.join(d, "missing.json"))
        check(rc == 2 and "missing.json" in err and not out, f"missing file: exit 2 naming it ({err.strip()})")
        bad = {"stream_read": {"points": [{"programs": 1, "bytes_per_step": 4096, "GBps": 12.0},
                                          {"programs": 8, "bytes_per_step": 4096, "GBps": "fast"}]}}
        rc, out, err = run("--device", "h200", "--measured", write(os.path.join(d, "bad.json"), bad))
        check(rc == 2 and "bad.json" in err and "stream_read.points[1].GBps" in err and not out,
              f"a non-numeric GBps: exit 2 naming the key ({err.strip()})")
        with open(os.path.join(d, "broken.json"), "w") as f:
            f.write('{"pointer_chase":\n  {"points": [}\n')
        rc, out, err = run("--device", "h200", "--measured", os.path.join(d, "broken.json"))
        check(rc == 2 and "broken.json: line 2" in err, f"not JSON: exit 2 with the line ({err.strip()})")
        rc, _, err = run("--device", "h200", "--measured", REFERENCE, "--only", "chase,dram")
        check(rc == 2 and "dram" in err, f"--only with an unknown kind: exit 2 ({err.strip()})")
        rc, _, err = run("--device", "no-such-gpu", "--measured", REFERENCE, "--only", "chase")
        check(rc == 2 and "no-such-gpu" in err, f"unknown device: exit 2 naming it ({err.strip()})")


if __name__ == "__main__":
    import pytest

    sys.exit(pytest.main([__file__, "-q"]))
