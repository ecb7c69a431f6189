"""The Python module (build/python/attnsim, docs/python.md) against the attnsim command it wraps:
run() equals `attnsim run --json` for every kernel on two devices, sweep() equals the CLI sweep's
table and points for any jobs, errors carry the CLI's messages, Ctrl-C stops a run, a sweep,
check() and cli(), progress goes to sys.stderr (what a notebook shows), the GIL is released while
simulating, scripts/env.sh makes the module importable, docs/python.md's reference lists every
public function with its signature, and its example runs as written."""
import inspect
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest

from sweep_tables import ROOT, differences, journaled, wait_for_points, write_sweep

# Small workloads per kernel: a fraction of a second each on either device.
SMALL = {
    "standard": dict(seq=256, head_dim=64),
    "flash1": dict(seq=256, head_dim=64),
    "flash2": dict(seq=256, head_dim=64, block_m=64, block_n=64),
    "flash3": dict(seq=256, head_dim=64),
    "flash_decode": dict(seq_kv=1024, head_dim=64),
    "pointer_chase": dict(working_set_bytes=65536, loads=2000),
    "stream_read": dict(total_bytes=1 << 20),
    "stream_copy": dict(total_bytes=1 << 20),
}
DEVICES = ("teaching", "h200")


def cli(att, *args):
    return subprocess.run([att] + [str(a) for a in args], capture_output=True, text=True, timeout=300)


def cli_json(att, *args):
    r = cli(att, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def set_args(keys):
    out = []
    for k, v in keys.items():
        out += ["--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    return out


def test_run_equals_cli_json_for_every_kernel(attnsim, attnsim_bin, check):
    kernels = attnsim.kernels()
    check(set(kernels) >= {"standard", "flash1", "flash2", "flash_decode", "pointer_chase"}, f"kernels(): {kernels}")
    for device in DEVICES:
        for kernel in kernels:
            keys = SMALL.get(kernel, {})
            r = cli(attnsim_bin, "run", "--device", device, "--kernel", kernel, *set_args(keys), "--json")
            if r.returncode != 0:
                # A kernel a device cannot run: the same refusal, as ConfigError / SimulationError.
                with pytest.raises((attnsim.ConfigError, attnsim.SimulationError)) as e:
                    attnsim.run(device, kernel, **keys)
                check(str(e.value) in r.stderr, f"{kernel} on {device}: same error ({e.value} vs {r.stderr.strip()})")
                continue
            res = attnsim.run(device, kernel, **keys)
            check(res.to_dict() == json.loads(r.stdout), f"{kernel} on {device}: run() == run --json")
            check(res.metrics == json.loads(r.stdout)["metrics"], f"{kernel} on {device}: .metrics")
            check(len(res.kernels) == len(json.loads(r.stdout)["kernels"]), f"{kernel} on {device}: .kernels")


def test_result_frames(attnsim, attnsim_bin, check, tmp_path):
    keys = dict(seq=512, head_dim=64, heads=2)
    res = attnsim.run("h200", "flash2", **keys, device_overrides={"l2.capacity_bytes": 0})
    j = cli_json(attnsim_bin, "run", "--device", "h200", "--kernel", "flash2", *set_args(keys),
                 "--set", "device.l2.capacity_bytes=0")
    t = res.tensors
    check(list(t.columns) == ["tensor", "level", "direction", "bytes"], f"tensors columns {list(t.columns)}")
    q = t[(t.tensor == "Q") & (t.level == "dram") & (t.direction == "read")]["bytes"]
    check(len(q) == 1 and int(q.iloc[0]) == j["tensors"]["Q"]["dram"]["read"], "tensors: Q dram read as in the JSON")
    dram = t[t.level == "dram"].groupby("direction")["bytes"].sum()
    check(dram["read"] == res.metrics["dram__bytes_read.sum"], "tensors: dram reads add up to dram__bytes_read.sum")
    # The series equals the HDF5 one attnsim run --out writes.
    out = tmp_path / "r.h5"
    r = cli(attnsim_bin, "run", "--device", "h200", "--kernel", "flash2", *set_args(keys),
            "--set", "device.l2.capacity_bytes=0", "--out", out)
    check(r.returncode == 0, f"run --out (rc {r.returncode})")
    p = attnsim.read_point(out, 0)
    check(len(res.series) > 0 and list(res.series.columns) == list(p.series.columns), f"series columns {list(res.series.columns)}")
    check(np.array_equal(res.series.to_numpy(), p.series.to_numpy(), equal_nan=True), "series == /points/0/series")
    check(res.series.attrs["period_ns"] == p.series.attrs["period_ns"], "series period_ns")
    check(p.metrics == res.metrics, "read_point(run --out).metrics == run().metrics")
    check(p.tensors.equals(res.tensors), "read_point tensors == run() tensors")
    check([k["name"] for k in p.kernels] == [k["name"] for k in res.kernels], "read_point kernels")
    check([k["metrics"] for k in p.kernels] == [k["metrics"] for k in res.kernels],
          "read_point kernels' metrics == run() kernels' metrics (attnsim__occupancy_limiter included)")
    df = attnsim.read(out)
    check(len(df) == 1 and df["dram__bytes_read.sum"].iloc[0] == res.metrics["dram__bytes_read.sum"], "read(run --out)")
    # The point's stored config reruns it: its device and device overrides come with it.
    import h5py
    with h5py.File(out, "r") as f:
        cfg = f["points/0/config"][()]
    (tmp_path / "point.yaml").write_bytes(cfg if isinstance(cfg, bytes) else cfg.encode())
    again = attnsim.run(workload=tmp_path / "point.yaml")
    check(again.metrics == res.metrics, "run(workload=<the point's config>).metrics == run().metrics")
    check(p.workload.get("block_m") == res.workload["block_m"] and p.device["overrides"] == {"l2.capacity_bytes": 0},
          f"read_point: resolved block_m and the device overrides ({p.workload}, {p.device})")
    # Functional mode's two errors, as the CLI prints them.
    fkeys = dict(seq=256, head_dim=64, dtype="fp8", functional=True, functional_inputs="outliers",
                 fp8_scales="block", incoherent_processing=True)
    fres = attnsim.run("h200", "flash3", **fkeys)
    fj = cli_json(attnsim_bin, "run", "--device", "h200", "--kernel", "flash3", *set_args(fkeys))
    check(fres.functional_rmse == fj["functional"]["rmse"] and fres.functional_rmse > 0, f"functional_rmse {fres.functional_rmse}")
    check(fres.functional_max_rel_error == fj["functional"]["max_rel_error"], "functional_max_rel_error")


SWEEP = {"name": "api", "device": "teaching",
         "base": {"kernel": "flash2", "head_dim": 32, "heads": 2},
         "axes": {"seq": [128, 256], "block_m": [16, 32, 64], "block_n": [16, 32]},
         "constraints": ["block_m * block_n <= 1024"]}


def write_yaml(path, spec):
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)  # JSON is YAML
    return str(path)


def test_rerun_gives_a_points_metrics_again(attnsim, check, tmp_path):
    spec = dict(SWEEP, set={"device.l2.capacity_bytes": "16 KiB", "sim.mode": "sampled", "sim.min_ops": 0})
    out = str(tmp_path / "s.h5")
    table = attnsim.sweep(spec, jobs=2, out=out, progress=False)
    ok = table[table.status == "ok"]["point_index"].tolist()
    check(len(ok) >= 6, f"ok points {ok}")
    for i in ok[:6]:
        again = attnsim.rerun(out, i, progress=False)
        check(again.metrics == attnsim.read_point(out, i).metrics, f"rerun({i}).metrics == read_point({i}).metrics")
    # With other keys: the point's own keys, device and overrides, then these.
    point = attnsim.read_point(out, ok[0])
    full = attnsim.rerun(out, ok[0], sim_mode="full", progress=False)
    check(point.metrics["attnsim__sim_mode"] == 1 and full.metrics["attnsim__sim_mode"] == 0,
          "sim_mode='full' on top of the point's sampled mode")
    bigger = attnsim.rerun(out, ok[0], device_overrides={"l2.capacity_bytes": "1 MiB"}, progress=False)
    check(bigger.metrics["lts__t_sector_hit_rate.pct"] > point.metrics["lts__t_sector_hit_rate.pct"],
          f"a larger L2 on top of the point's 16 KiB: hit rate {point.metrics['lts__t_sector_hit_rate.pct']} -> "
          f"{bigger.metrics['lts__t_sector_hit_rate.pct']}")
    bad = table[table.status == "impossible"]["point_index"].tolist()
    try:
        attnsim.rerun(out, bad[0], progress=False)
        check(False, "rerun of an impossible point raises ConfigError")
    except attnsim.ConfigError as e:
        check("impossible" in str(e), f"message names the status: {e}")


def test_sweep_equals_cli_sweep(attnsim, attnsim_bin, check, tmp_path):
    spec = write_yaml(tmp_path / "s.yaml", SWEEP)
    ref = str(tmp_path / "ref.h5")
    r = cli(attnsim_bin, "sweep", spec, "--out", ref, "-j", "1")
    check(r.returncode == 0, f"CLI sweep (rc {r.returncode}) {r.stderr[-300:]}")
    want = attnsim.read(ref)
    check(len(want) == 12 and set(want["status"]) == {"ok", "impossible"}, f"12 points, some impossible: {len(want)}")
    for jobs in (1, 2, 3):
        out = str(tmp_path / f"py{jobs}.h5")
        got = attnsim.sweep(spec, jobs=jobs, out=out, progress=False)
        try:
            pd.testing.assert_frame_equal(got, want)
            same = True
        except AssertionError as e:
            same, why = False, str(e)
        check(same, f"sweep(jobs={jobs}) DataFrame == CLI table" + ("" if same else f": {why[:300]}"))
        diff = differences(ref, out)
        check(not diff, f"sweep(jobs={jobs}) file == CLI file (table and point records) {diff[:5]}")
    got = attnsim.sweep(SWEEP, jobs=2, progress=False)  # a dict, no out: a temporary file
    check(got.equals(want) and got.attrs["path"] is None, "sweep(dict) == CLI table, temporary file")
    check(got.attrs["summary"]["ok"] == (want["status"] == "ok").sum(), f"summary {got.attrs['summary']}")
    i = int(want.index[want["status"] == "ok"][0])
    p = attnsim.read_point(ref, int(want["point_index"][i]))
    check(p.metrics["dram__bytes_read.sum"] == want["dram__bytes_read.sum"][i], "read_point metrics == table row")
    check(p.workload["block_m"] == want["block_m"][i], "read_point workload == table row")


def test_sweep_overrides_equal_cli_set(attnsim, attnsim_bin, check, tmp_path):
    spec = write_yaml(tmp_path / "s.yaml", SWEEP)
    ref = str(tmp_path / "ref.h5")
    r = cli(attnsim_bin, "sweep", spec, "--out", ref, "-j", "1", "--set", "sim.mode=sampled", "--set",
            "device.l2.capacity_bytes=0")
    check(r.returncode == 0, f"CLI sweep --set (rc {r.returncode}) {r.stderr[-300:]}")
    out = str(tmp_path / "py.h5")
    got = attnsim.sweep(spec, jobs=1, out=out, progress=False,
                        overrides={"sim.mode": "sampled", "device.l2.capacity_bytes": 0})
    diff = differences(ref, out)
    check(not diff, f"sweep(overrides=...) file == CLI --set file (table and point records) {diff[:5]}")
    check((got.loc[got["status"] == "ok", "attnsim__sim_mode"] == 1).all(), "every point ran sampled")
    try:
        attnsim.sweep(spec, progress=False, overrides={"block_m": 64})
        refused = False
    except attnsim.ConfigError as e:
        refused = "--set block_m: the sweep varies this key" in str(e)
    check(refused, "an override of an axis key is refused with the CLI's message")


def test_sweep_plan_says_what_sweep_will_do(attnsim, attnsim_bin, check, tmp_path):
    spec = write_yaml(tmp_path / "s.yaml", SWEEP)
    plan = attnsim.sweep_plan(spec)
    table = attnsim.sweep(spec, jobs=2, progress=False)
    check(list(plan["point_index"]) == list(table["point_index"]), "one plan row per point, in index order")
    check(list(plan["status"]) == list(table["status"]), f"statuses as the sweep's: {list(plan['status'])}")
    check(list(plan["block_m"]) == list(table["block_m"]), "the point's keys, typed as the table's")
    ok = plan["status"] == "ok"
    check(plan.loc[ok, "tile_ops"].gt(0).all() and plan.loc[~ok, "tile_ops"].isna().all(), "tile ops of ok points only")
    check(plan.loc[~ok, "reason"].str.len().gt(0).all(), "every impossible point has its reason")
    r = cli(attnsim_bin, "sweep", spec, "--dry-run")
    lines = [line.split() for line in r.stdout.splitlines()]
    rows = [cells for cells in lines if cells and cells[0].isdigit() and len(cells) > 1 and cells[1] != "ok,"]
    check(r.returncode == 0 and len(rows) == len(plan), f"CLI --dry-run lists {len(rows)} points (rc {r.returncode})")
    try:
        attnsim.sweep_plan({"device": "h200", "base": {"kernel": "flash2"}, "axes": {"block_m": []}})
        refused = False
    except attnsim.ConfigError as e:
        refused = "axes.block_m" in str(e)
    check(refused, "a bad spec raises ConfigError naming the key")


def test_errors_carry_the_cli_messages(attnsim, attnsim_bin, check, tmp_path):
    r = cli(attnsim_bin, "run", "--device", "h200", "--kernel", "flash9")
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.run("h200", "flash9")
    check(r.returncode == 2 and f"attnsim run: error: {e.value}\n" == r.stderr, f"unknown kernel: {e.value!r} / {r.stderr!r}")
    check(isinstance(e.value, ValueError), "ConfigError is a ValueError")
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.run("h200", "flash2", seq=0)
    check("seq" in str(e.value), f"seq=0: {e.value}")
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.run("no-such-gpu", "flash2")
    check("no-such-gpu" in str(e.value), f"unknown device: {e.value}")
    wl = tmp_path / "w.yaml"
    wl.write_text("kernel: flash2\nseq: 256\nhead_dimm: 64\n")
    r = cli(attnsim_bin, "run", "--device", "h200", "--workload", wl)
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.run("h200", workload=wl)
    check(f"{wl}:3: head_dimm" in str(e.value) and str(e.value) in r.stderr, f"workload file: file:line: key ({e.value})")
    bad = write_yaml(tmp_path / "bad.yaml", dict(SWEEP, axes={"block_m": []}))
    out = tmp_path / "bad.h5"
    r = cli(attnsim_bin, "sweep", bad, "--out", out)
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.sweep(bad, out=out, progress=False)
    check(r.returncode == 2 and str(e.value) in r.stderr and "bad.yaml" in str(e.value), f"bad sweep: {e.value}")
    check(not os.path.exists(out), "bad sweep: no output file")
    with pytest.raises(attnsim.ConfigError):
        attnsim.sweep(dict(SWEEP, axes={"block_m": []}), progress=False)
    with pytest.raises(attnsim.ConfigError):
        attnsim.read(tmp_path / "w.yaml")


def test_exception_mapping(attnsim):
    # The C++ exceptions as main() maps them to exit codes: ConfigError and option errors (2) ->
    # attnsim.ConfigError, SimError (3) -> attnsim.SimulationError, with their messages.
    with pytest.raises(attnsim.ConfigError, match=r"^f\.yaml:3: key\.path: bad$"):
        attnsim._core._throw("config", "bad")
    with pytest.raises(attnsim.ConfigError, match="^unknown option$"):
        attnsim._core._throw("option", "unknown option")
    with pytest.raises(attnsim.SimulationError, match="^engine stuck$") as e:
        attnsim._core._throw("sim", "engine stuck")
    assert isinstance(e.value, RuntimeError) and not isinstance(e.value, attnsim.ConfigError)


def test_small_commands_equal_the_cli(attnsim, attnsim_bin, check):
    check(attnsim.formulas(seq=1024, head_dim=64, heads=2) ==
          cli_json(attnsim_bin, "formulas", "--seq", 1024, "--tile", 64, "--head-dim", 64, "--heads", 2), "formulas()")
    check(attnsim.occupancy("h200", threads=256, regs=128, smem=65536) ==
          cli_json(attnsim_bin, "occupancy", "--device", "h200", "--threads", 256, "--regs", 128, "--smem", 65536),
          "occupancy()")
    check(attnsim.softmax_trace([1, 3, 2, 5, 4], block=2) ==
          cli_json(attnsim_bin, "softmax-trace", "--scores", "1,3,2,5,4", "--block", 2), "softmax_trace()")
    ok, text = attnsim.check(device="teaching", kernel="flash2", seq=256, head_dim=32)
    r = cli(attnsim_bin, "check", "--device", "teaching", "--set", "kernel=flash2", "--set", "seq=256",
            "--set", "head_dim=32")
    check(ok and r.returncode == 0 and text == r.stdout, f"check(): {ok}, same report")
    names = attnsim.devices()["name"].tolist()
    check({"h200", "teaching", "a100-80gb"} <= set(names), f"devices(): {names}")
    d = attnsim.device("h200")
    d0 = attnsim.device("h200", **{"l2.capacity_bytes": 0})
    check(d["l2"]["capacity_bytes"] > 0 and d0["l2"]["capacity_bytes"] == 0, "device(): resolved preset, overrides")
    keys = attnsim.workload_keys("flash2").set_index("key")
    wl = cli_json(attnsim_bin, "run", "--device", "teaching", "--kernel", "flash2")["workload"]
    same = [k for k in ("batch", "heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal") if keys.loc[k, "default"] == wl[k]]
    check(len(same) == 7 and keys.loc["head_dim", "unit"] == "elements",
          f"workload_keys(): the CLI's defaults ({same}), units")


def test_gil_released_while_simulating(attnsim):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    attnsim.run("h200", "flash2", seq=8192, head_dim=128, heads=4)
    elapsed = time.perf_counter() - t0
    stop.set()
    t.join()
    # A thread holding the GIL would starve the counter for the whole run.
    assert elapsed > 0.1 and len(ticks) > 0.25 * elapsed / 0.001 * 0.5, f"{len(ticks)} ticks in {elapsed:.2f} s"


# The child restores Python's own SIGINT handler: a test run started in the background by a shell
# without job control inherits SIGINT ignored, and Python then installs no KeyboardInterrupt.
CHILD = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {path!r})
import attnsim
print("started", flush=True)
t0 = time.perf_counter()
try:
    {call}
    print("finished", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {{time.perf_counter() - t0:.2f}} s", flush=True)
    sys.exit(7)
"""


def interrupt_child(attnsim, call, ready, timeout=120):
    path = os.path.dirname(os.path.dirname(os.path.abspath(attnsim.__file__)))
    p = subprocess.Popen([sys.executable, "-c", CHILD.format(path=path, call=call)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    assert ready(p), "the child never got going"
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err, time.perf_counter() - t0


def test_ctrl_c_stops_a_run(attnsim, check):
    # About 10 s of simulation; SIGINT after 1 s must end it within a few seconds.
    rc, out, err, took = interrupt_child(attnsim, 'attnsim.run("h200", "flash2", seq=16384, head_dim=128, heads=4)',
                                         lambda p: time.sleep(1.0) or p.poll() is None)
    check(rc == 7 and "interrupted" in out, f"run: KeyboardInterrupt (rc {rc}) {out} {err[-300:]}")
    check(took < 5, f"run: stopped {took:.2f} s after SIGINT")


def test_ctrl_c_stops_a_sweep(attnsim, check, tmp_path):
    sweep = str(tmp_path / "s.yaml")
    write_sweep(sweep, seqs=(1024, 2048), block_ms=(16, 32), block_ns=(16, 32, 64), batch=2)  # 12 points
    out = str(tmp_path / "s.h5")
    rc, stdout, err, took = interrupt_child(
        attnsim, f"attnsim.sweep({sweep!r}, jobs=2, out={out!r}, progress=False)",
        lambda p: wait_for_points(p, out, 1))
    check(rc == 7 and "interrupted" in stdout, f"sweep: KeyboardInterrupt (rc {rc}) {stdout} {err[-300:]}")
    kept = journaled(out)
    check(1 <= kept < 12, f"sweep: finished points journaled ({kept} of 12)")
    done = attnsim.sweep(sweep, jobs=2, out=out, progress=False, resume=True)
    check(len(done) == 12 and done.attrs["summary"]["resumed"] == kept, f"resume=True completes it ({done.attrs['summary']})")


# A check of one workload whose functional mode takes seconds (about 13 s on the 2-core container).
LONG_CHECK = "kernel: flash2\nseq: 4096\nhead_dim: 256\nheads: 1\n"


def test_ctrl_c_stops_check(attnsim, check, tmp_path):
    wl = tmp_path / "long.yaml"
    wl.write_text(LONG_CHECK)
    rc, out, err, took = interrupt_child(attnsim, f"attnsim.check({str(wl)!r})",
                                         lambda p: time.sleep(1.0) or p.poll() is None)
    check(rc == 7 and "interrupted" in out, f"check(): KeyboardInterrupt (rc {rc}) {out} {err[-300:]}")
    check(took < 4, f"check(): stopped {took:.2f} s after SIGINT (inside the workload, not after it)")


def test_ctrl_c_stops_cli(attnsim, check):
    # `run` through cli(): about 9 s of simulation on the 2-core container.
    call = ('attnsim.cli("run", "--device", "h200", "--kernel", "flash2", "--set", "seq=32768", '
            '"--set", "head_dim=128", "--set", "heads=4", "--json")')
    rc, out, err, took = interrupt_child(attnsim, call, lambda p: time.sleep(1.0) or p.poll() is None)
    check(rc == 7 and "interrupted" in out, f"cli('run'): KeyboardInterrupt (rc {rc}) {out} {err[-300:]}")
    check(took < 4, f"cli('run'): stopped {took:.2f} s after SIGINT")


class _TerminalIO(io.StringIO):
    """A StringIO that says it is a terminal (as a notebook's stream is treated)."""

    def isatty(self):
        return True


def _captured_stderr(stream, call):
    old = sys.stderr
    sys.stderr = stream
    try:
        t0 = time.perf_counter()
        call()
        return stream.getvalue(), time.perf_counter() - t0
    finally:
        sys.stderr = old


def test_progress_goes_to_sys_stderr(attnsim, check, capfd):
    # What a notebook shows is what Python's sys.stderr receives; the process's stderr (a Jupyter
    # server's log) gets nothing.
    capfd.readouterr()
    text, _ = _captured_stderr(io.StringIO(), lambda: attnsim.sweep(SWEEP, jobs=2, progress=True))
    check(re.search(r"^sweep: 12/12 ", text, re.M) is not None, f"sweep(progress=True): lines on sys.stderr {text!r}")
    text, _ = _captured_stderr(_TerminalIO(), lambda: attnsim.sweep(SWEEP, jobs=2, progress=True))
    check(text.startswith("\r[") and "12/12" in text and text.endswith("\n"), f"sweep, terminal: a redrawn bar {text[-120:]!r}")
    text, _ = _captured_stderr(io.StringIO(), lambda: attnsim.sweep(SWEEP, jobs=2, progress=False))
    check(text == "", f"sweep(progress=False): nothing {text!r}")
    # A run over 1 s on a terminal (or in a notebook): one line redrawn with '\r', erased at the end.
    long_run = dict(seq=16384, head_dim=128, heads=8)
    text, took = _captured_stderr(_TerminalIO(), lambda: attnsim.run("h200", "flash2", **long_run))
    check(took > 1.3, f"the run is long enough to report progress ({took:.2f} s)")
    check(text.startswith("\rattnsim run: flash2_fwd launch 1/1: ") and "CTAs" in text, f"run(): progress {text[:120]!r}")
    check(text.endswith("\r") and text.rstrip("\r ").count("\n") == 0, f"run(): the line is erased at the end {text[-40:]!r}")
    text, took = _captured_stderr(_TerminalIO(), lambda: attnsim.run("h200", "flash2", progress=False, **long_run))
    check(took > 1.3 and text == "", f"run(progress=False): nothing in {took:.2f} s {text[:80]!r}")
    text, _ = _captured_stderr(_TerminalIO(), lambda: attnsim.cli(
        "run", "--device", "h200", "--kernel", "flash2", *set_args(long_run), "--json"))
    check(text.startswith("\rattnsim run: flash2_fwd launch 1/1: "), f"cli('run'): progress on sys.stderr {text[:80]!r}")
    fd = capfd.readouterr()
    check("sweep:" not in fd.err and "attnsim run:" not in fd.err, f"nothing on the process's stderr {fd.err[:200]!r}")


def test_env_sh_makes_the_module_importable(attnsim_bin, check, tmp_path):
    if os.environ.get("ATTNSIM_PYTHON") == "off":
        pytest.skip("the Python module is not built here (ATTNSIM_PYTHON=off)")
    build = os.path.dirname(os.path.abspath(attnsim_bin))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNSIM")}
    env.update(ATTNSIM_BUILD_DIR=build, PYTHONPATH="/elsewhere")
    script = shlex.quote(os.path.join(ROOT, "scripts", "env.sh"))
    # From another directory, sourced twice (no duplicate entries); the alias runs the binary.
    cmd = (f"shopt -s expand_aliases\ncd {shlex.quote(str(tmp_path))}\nsource {script}\nsource {script}\n"
           "/usr/bin/python3 -c 'import attnsim, os; print(attnsim.__file__); print(os.environ[\"ATTNSIM\"])'\n"
           "echo \"PYTHONPATH=$PYTHONPATH\"\nattnsim --version\n")
    r = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 4, f"bash: source scripts/env.sh (rc {r.returncode}) {r.stdout!r} {r.stderr[-300:]!r}")
    if len(lines) == 4:
        check(lines[0] == os.path.join(build, "python", "attnsim", "__init__.py"), f"imports build/python: {lines[0]}")
        check(lines[1] == os.path.join(build, "attnsim"), f"ATTNSIM: {lines[1]}")
        check(lines[2] == f"PYTHONPATH={build}/python:/elsewhere", f"PYTHONPATH once, before the old one: {lines[2]}")
        check(lines[3].startswith("attnsim "), f"the alias runs the binary: {lines[3]}")
    # Without it, the import fails (the check above can fail).
    r = subprocess.run(["/usr/bin/python3", "-c", "import attnsim"], env=env, cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=60)
    check(r.returncode != 0, "without env.sh, no attnsim module")


def _reference_table(text):
    return text[text.index("## API reference"):]


def test_cta_timeline_equals_the_cli_trace(attnsim, attnsim_bin, check, tmp_path):
    args = dict(seq=256, head_dim=64, heads=2)
    df = attnsim.cta_timeline("teaching", "flash2", ctas=[0, 3], **args)
    path = tmp_path / "t.tsv"
    r = cli(attnsim_bin, "run", "--device", "teaching", "--kernel", "flash2", *set_args(args), "--trace", path,
            "--trace-ctas", "0,3")
    check(r.returncode == 0, r.stderr)
    want = pd.read_csv(path, sep="\t", keep_default_na=False)
    check(df.equals(want), f"cta_timeline equals the CLI's table ({len(df)} and {len(want)} rows)")
    check(sorted(set(df.cta)) == [0, 3], f"CTAs {sorted(set(df.cta))}")
    check((df.end_cycles >= df.start_cycles).all(), "every op ends no earlier than it starts")
    check(set(df.kind) >= {"load", "mma", "exp", "store"}, f"kinds {sorted(set(df.kind))}")
    with pytest.raises(attnsim.ConfigError, match="CTA 999999 is in no launch"):
        attnsim.cta_timeline("teaching", "flash2", ctas="999999", **args)


def test_docs_reference_lists_every_function(attnsim, check):
    ref = _reference_table(open(os.path.join(ROOT, "docs", "python.md")).read())
    functions = [(n, getattr(attnsim, n)) for n in attnsim.__all__ if inspect.isfunction(getattr(attnsim, n))]
    functions += [("plot." + n, getattr(attnsim.plot, n)) for n in dir(attnsim.plot)
                  if not n.startswith("_") and inspect.isfunction(getattr(attnsim.plot, n))
                  and getattr(attnsim.plot, n).__module__ == attnsim.plot.__name__]
    check(len(functions) >= 20, f"{len(functions)} public functions")
    for name, f in functions:
        sig = f"`{name}{inspect.signature(f)}`".replace("'", '"')
        check(sig in ref, f"docs/python.md lists {sig}")
    for name in ("ConfigError", "SimulationError", "SweepWarning", "KeyboardInterrupt"):
        check(f"`{name}`" in ref, f"docs/python.md names {name}")


def test_docs_example_runs_as_written(attnsim, tmp_path):
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    m = re.search(r"<!-- example: tested by scripts/tests/test_python_api.py -->\n```python\n(.*?)```", text, re.S)
    assert m, "docs/python.md has no tested example block"
    code = m.group(1)
    assert len(code.strip().splitlines()) <= 10, "the example is at most 10 lines"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(attnsim.__file__))),
               MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    pngs = [f for f in os.listdir(tmp_path) if f.endswith(".png")]
    assert pngs, f"the example writes a figure: {os.listdir(tmp_path)}"


def test_run_sim_mode_equals_cli_set(attnsim, attnsim_bin, check):
    """sim_mode= is the workload key sim.mode: the same result as --set sim.mode=sampled, recorded
    in attnsim__sim_mode; a bad mode is a ConfigError naming the key."""
    keys = dict(heads=4, seq=4096, head_dim=128)
    r = cli(attnsim_bin, "run", "--device", "h200", "--kernel", "flash2", *set_args(keys), "--set", "sim.mode=sampled",
            "--json")
    check(r.returncode == 0, r.stderr)
    res = attnsim.run("h200", "flash2", sim_mode="sampled", progress=False, **keys)
    check(res.metrics == json.loads(r.stdout)["metrics"], "run(sim_mode='sampled') == run --set sim.mode=sampled")
    check(res.metrics["attnsim__sim_mode"] == 1 and res.metrics["attnsim__sampled_fraction"] < 1, f"{res.metrics}")
    with pytest.raises(attnsim.ConfigError) as e:
        attnsim.run("h200", "flash2", sim_mode="fast", progress=False, **keys)
    check("sim.mode" in str(e.value), f"sim_mode='fast': {e.value}")


def test_pytorch_release_is_a_string(attnsim, check):
    """standard's `pytorch` key: a release string runs (and is stored as given); a float is refused
    before it reaches the loader (2.10 would read as 2.1); a release before 1.2 is a ConfigError."""
    off = {"l2.capacity_bytes": 0}
    r = attnsim.run(device="h200", kernel="standard", seq=1100, heads=2, head_dim=64, pytorch="2.3",
                    device_overrides=off)
    check(r.workload["pytorch"] == "2.3", f"stored release {r.workload.get('pytorch')!r}")
    now = attnsim.run(device="h200", kernel="standard", seq=1100, heads=2, head_dim=64, device_overrides=off)
    check(now.workload["pytorch"] == "2.11", "default release 2.11")
    s_old = r.tensors.query("tensor == 'S' and level == 'dram' and direction == 'read'")["bytes"].sum()
    s_now = now.tensors.query("tensor == 'S' and level == 'dram' and direction == 'read'")["bytes"].sum()
    matrix = 2 * 1100 * 1100 * 2  # H·N²·v
    check(s_old == s_now + 2 * matrix, f"2.3's three-pass softmax reads S twice more ({s_old} vs {s_now} B, L2 off)")
    with pytest.raises(TypeError, match="as a string"):
        attnsim.run(device="h200", kernel="standard", seq=1100, heads=2, head_dim=64, pytorch=2.10)
    with pytest.raises(attnsim.ConfigError, match="releases before 1.2"):
        attnsim.run(device="h200", kernel="standard", seq=1100, heads=2, head_dim=64, pytorch="1.1")
