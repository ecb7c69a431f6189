"""experiments/calibration/decide.py: device_run.sh outputs in, one decision per opt-in key out.

Synthetic outputs in the layout each kernels/cuda benchmark prints, once as a GPU whose units
overlap and once as one that runs them one after the other: each must flip its key. Missing files
read as not measured; a bad folder or a file of the wrong layout is exit 2.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "experiments", "calibration", "decide.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import decide  # noqa: E402


def outputs(folder, serial, clock_mhz=1980.0):
    """Write the six benchmarks' JSON files as a GPU that overlaps (serial=False) or not."""
    copies, ffma = 131072, 16384
    copy_alone, ffma_alone = 9000, 20000
    both = copy_alone + ffma_alone if serial else max(copy_alone, ffma_alone) + 200
    issue = 8000 if serial else 300
    points = []
    for k in (0, 4096, copies):
        for f in (0, 4096, ffma):
            done = {0: 0, 4096: copy_alone // 8, copies: copy_alone}[k] if f == 0 else \
                (ffma_alone if k == 0 else (both if k == copies else max(ffma_alone, 2000)))
            points.append({"copy_bytes_per_cta": k, "ffma_per_thread": f, "issue_cycles": issue if k else 10,
                           "compute_cycles": done, "done_cycles": done})
    for name in ("async_copy_issue_1cta", "async_copy_issue_per_sm"):
        with open(os.path.join(folder, name + ".json"), "w") as fh:
            json.dump({"device": "test", "sm_count": 132, "ctas": 1, "threads_per_cta": 128, "points": points}, fh)
    mma, math = 10000, 6000
    mix = mma + math if serial else mma + 100
    modes = {"mma4": {"warps": 4, "median_cycles": mma, "max_cycles": mma, "tensor_flop_per_cycle_per_sm": 2700.0},
             "mma8": {"warps": 8, "median_cycles": 2 * mma, "max_cycles": 2 * mma, "tensor_flop_per_cycle_per_sm": 2720.0},
             "math4": {"warps": 4, "median_cycles": math, "max_cycles": math, "tensor_flop_per_cycle_per_sm": 0.0},
             "mix": {"warps": 8, "median_cycles": mix, "max_cycles": mix, "tensor_flop_per_cycle_per_sm": 1700.0},
             "alt8": {"warps": 8, "median_cycles": mix, "max_cycles": mix, "tensor_flop_per_cycle_per_sm": 1700.0}}
    with open(os.path.join(folder, "mma_sync_rate.json"), "w") as fh:
        json.dump({"device": "test", "sm_count": 132, "iters": 65536, "modes": modes}, fh)
    wg, ex2 = 8000, 4000
    both_wg = wg + ex2 if serial else wg + 50
    w = {"mma1": {"cycles_wg": [wg // 2, 0, 0]}, "mma2": {"cycles_wg": [wg, wg, 0]}, "ex2": {"cycles_wg": [0, 0, ex2]},
         "both": {"cycles_wg": [both_wg, both_wg, ex2]}, "fma": {"cycles_wg": [0, 0, ex2]},
         "both_fma": {"cycles_wg": [both_wg, both_wg, ex2]}, "mma1_ex2": {"cycles_wg": [wg // 2, 0, ex2]}}
    with open(os.path.join(folder, "wgmma_sfu.json"), "w") as fh:
        json.dump({"device": "test", "sms": 132, "iters": 1024, "modes": w}, fh)
    loads = {n: {"ctas_per_sm": 1, "warps": 8, "short": {"median_mhz": 1980.0, "min_mhz": 1975.0, "max_mhz": 1980.0},
                 "sustained": {"median_mhz": clock_mhz if n in ("issue", "mma") else 1980.0, "min_mhz": 1.0,
                               "max_mhz": 1980.0}} for n in ("spin", "issue", "mma", "mma_math", "stream")}
    with open(os.path.join(folder, "sm_clock.json"), "w") as fh:
        json.dump({"device": "test", "sm_count": 132, "clock_rate_mhz": 1980, "sustained_ms": 200, "loads": loads}, fh)
    cases = [{"variant": "untimed", "cols": 1024, "us": 60.0},
             {"variant": "as_is", "cols": 1024, "us": 61.0,
              "warp_cycles": {"loads_and_max": 1, "max_reduce": 1, "exp_and_sum": 1, "sum_reduce": 1,
                              "divide_and_store": 1, "life": 5}}]
    reads, copied = 20000, 256000  # the copies' writes: 2000 cycles of the banks at 128 B a cycle
    with open(os.path.join(folder, "smem_fill.json"), "w") as fh:
        json.dump({"device": "test", "sm_count": 132, "ctas": 132, "reads_per_warp": 4096,
                   "read_bytes_per_cta": 8388608, "read_cycles_alone": reads,
                   "read_cycles_beside_copies": reads + (2000 if serial else 40), "copied_bytes_per_cta": copied}, fh)
    with open(os.path.join(folder, "softmax_phases.json"), "w") as fh:
        json.dump({"device": "test", "sm_count": 132, "heads": 32, "reps": 5, "cases": cases}, fh)


def test_overlap_helper():
    assert decide.overlap(10, 6, 10) == 1.0
    assert decide.overlap(10, 6, 16) == 0.0
    assert decide.overlap(10, 6, 13) == pytest.approx(0.5)
    assert decide.overlap(10, 0, 10) is None
    assert [decide.verdict(x) for x in (0.8, 0.2, 0.5, None)] == ["overlap", "serial", "partial", "not measurable"]


@pytest.mark.parametrize("serial", [False, True])
def test_each_key_follows_its_measurement(tmp_path, serial):
    outputs(str(tmp_path), serial, clock_mhz=1700.0 if serial else 1975.0)
    r = decide.decide(str(tmp_path), "h200")
    for name in ("async_copy_issue_1cta", "async_copy_issue_per_sm"):
        assert r[name]["sm.queue_async_copies"] is (not serial), name
        assert r[name]["issue_grows"] is serial
    assert r["mma_sync_rate"]["verdict"] == ("serial" if serial else "overlap")
    assert r["mma_sync_rate"]["flops_per_cycle"] == 2720.0
    assert r["mma_sync_rate"]["preset_flops_per_cycle"] == 2731
    assert r["wgmma_sfu"]["ex2"]["sm.sfu_holds_tensor"] is serial
    assert r["wgmma_sfu"]["fma"]["sm.fp32_holds_tensor"] is serial
    assert r["sm_clock"]["lower_under_load"] == (["issue", "mma"] if serial else [])
    assert r["smem_fill"]["sm.async_fills_take_banks"] is serial
    assert r["smem_fill"]["share_of_bank_cycles"] == pytest.approx(1.0 if serial else 0.02)
    assert r["settings"] == {"sm.queue_async_copies": not serial, "sm.sfu_holds_tensor": serial,
                             "sm.fp32_holds_tensor": serial, "sm.async_fills_take_banks": serial}
    assert r["softmax_phases"][0]["against_kernels_csv"] == pytest.approx(60.0 / 54.688 - 1)


def test_partial_overlap_changes_nothing(tmp_path):
    outputs(str(tmp_path), serial=False)
    path = tmp_path / "wgmma_sfu.json"
    data = json.loads(path.read_text())
    data["modes"]["both"]["cycles_wg"] = [10000, 10000, 4000]  # halfway between 8000 and 12000
    path.write_text(json.dumps(data))
    r = decide.decide(str(tmp_path), "h200")
    assert r["wgmma_sfu"]["ex2"]["verdict"] == "partial"
    assert r["wgmma_sfu"]["ex2"]["sm.sfu_holds_tensor"] is None
    assert "sm.sfu_holds_tensor" not in r["settings"] and "sm.fp32_holds_tensor" in r["settings"]


def test_command_line(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = subprocess.run([sys.executable, SCRIPT, str(empty)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("not measured") == 7
    outputs(str(tmp_path), serial=True)
    out = subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "sm.sfu_holds_tensor: true" in out.stdout and "sm.queue_async_copies: false" in out.stdout
    assert "sm.async_fills_take_banks: true" in out.stdout
    assert out.stdout.splitlines()[-1] == ("as measured: --set device.sm.queue_async_copies=false "
                                           "--set device.sm.sfu_holds_tensor=true --set device.sm.fp32_holds_tensor=true "
                                           "--set device.sm.async_fills_take_banks=true")
    js = subprocess.run([sys.executable, SCRIPT, str(tmp_path), "--json"], capture_output=True, text=True)
    assert json.loads(js.stdout)["wgmma_sfu"]["fma"]["sm.fp32_holds_tensor"] is True
    bad = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a folder" in bad.stderr
    (tmp_path / "mma_sync_rate.json").write_text('{"modes": {}}')
    wrong = subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)
    assert wrong.returncode == 2 and "mma_sync_rate.json" in wrong.stderr and not wrong.stdout
