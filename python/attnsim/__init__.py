"""attnsim: simulate attention kernels on GPU memory hierarchies from Python (docs/python.md).

A thin layer over the C++ library the ``attnsim`` command runs (the pybind11 module
``attnsim._core``): ``run`` gives what ``attnsim run --json`` prints, ``sweep`` writes the same HDF5
results file as ``attnsim sweep`` and returns its table as a pandas DataFrame.

    import attnsim
    r = attnsim.run("h200", "flash2", seq=4096, head_dim=128, block_m=64)
    r.metrics["dram__bytes_read.sum"]
    df = attnsim.sweep({"device": "h200", "base": {"kernel": "flash2", "seq": 4096},
                        "axes": {"block_m": [64, 128], "block_n": [64, 128]}})

Bad input raises ConfigError with the command line's message (``file:line: key: message`` where
there is a file); a failed simulation raises SimulationError. Ctrl-C (a notebook's interrupt)
stops a run, a sweep, check() or cli() and raises KeyboardInterrupt. Progress goes to
``sys.stderr``, so a notebook shows it in the cell.
"""
import copy
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd

from . import _core

__all__ = [
    "ConfigError", "SimulationError", "SweepWarning", "Result", "run", "sweep", "read", "read_point", "rerun",
    "formulas", "occupancy", "softmax_trace", "check", "devices", "device", "kernels", "workload_keys",
    "cli", "cta_timeline", "plot", "sweep_plan",
]

ConfigError = _core.ConfigError
ConfigError.__doc__ = "Bad input (a ValueError): the message is the command line's, file:line: key: message."
SimulationError = _core.SimulationError
SimulationError.__doc__ = "The simulation itself failed (a RuntimeError); `attnsim` exits 3 for these."


class SweepWarning(UserWarning):
    """A sweep finished with points whose status is 'error' (the CLI exits 3 then)."""


LEVELS = ("dram", "lts", "l1", "smem")
DIRECTIONS = ("read", "write")


def _value_text(value):
    """A Python value as the YAML text of a --set override."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


def _set_text(key, value):
    """`key=value` for a --set override; a release given as a float is refused (2.10 reads as 2.1)."""
    if key == "pytorch" and isinstance(value, (float, np.floating)):
        raise TypeError(f"pytorch: give the release as a string, e.g. '{value!r}' or '2.10' "
                        "(a float cannot tell 2.1 from 2.10)")
    return f"{key}={_value_text(value)}"


def _sets(keys, device_overrides):
    sets = [_set_text(k, v) for k, v in keys.items() if v is not None]
    for k, v in (device_overrides or {}).items():
        k = k if k.startswith("device.") else "device." + k
        sets.append(f"{k}={_value_text(v)}")
    return sets


def _stderr_is_terminal():
    """Whether progress may be one line redrawn with '\\r': sys.stderr is a terminal or a Jupyter
    cell (ipykernel's stream, which renders '\\r' in place); else plain lines, as in a log."""
    err = sys.stderr
    if err is None:
        return False
    if type(err).__module__.split(".")[0] == "ipykernel":
        return True
    try:
        return bool(err.isatty())
    except Exception:
        return False


def _tensor_frame(tensors):
    """{"Q": {"dram": {"read": R, "write": W}, ...}} -> DataFrame (tensor, level, direction, bytes)."""
    rows = [(t, lvl, d, int(b)) for t, levels in tensors.items() for lvl, dirs in levels.items()
            for d, b in dirs.items()]
    return pd.DataFrame(rows, columns=["tensor", "level", "direction", "bytes"])


class Result:
    """One simulated run.

    Attributes:
      workload   dict of the resolved workload keys
      device     dict of the device's name and key numbers
      metrics    dict of the run's totals, Nsight Compute names in base units
                 (``dram__bytes_read.sum`` bytes, ``gpu__time_duration.sum`` ns, ...)
      kernels    list of launches, each a dict: name, metrics (dict), tensors (DataFrame)
      tensors    DataFrame with one row per tensor x level (dram, lts, l1, smem) x direction
                 (read, write): columns tensor, level, direction, bytes
      series     DataFrame of the sampled time series (time_ns, dram_gbps, lts_gbps,
                 active_warps_pct, ...), launches joined back to back; ``series.attrs["period_ns"]``
      functional_max_rel_error  float, or None when the run was not functional
      functional_rmse  float, or None: RMS error of O against exact attention on the
                 unquantized inputs (docs/kernels.md, functional mode)
    ``to_dict()`` is the object ``attnsim run --json`` prints (for a Result from ``run``).
    """

    def __init__(self, data, series=None, period_ns=None):
        self._data = data
        self.workload = data.get("workload", {})
        self.device = data.get("device", {})
        self.metrics = data.get("metrics", {})
        self.kernels = [{"name": k["name"], "metrics": k.get("metrics", {}),
                         "tensors": _tensor_frame(k.get("tensors", {}))} for k in data.get("kernels", [])]
        self.tensors = _tensor_frame(data.get("tensors", {}))
        self.series = pd.DataFrame(series or {})
        self.series.attrs["period_ns"] = period_ns
        self.functional_max_rel_error = data.get("functional", {}).get("max_rel_error")
        self.functional_rmse = data.get("functional", {}).get("rmse")

    def to_dict(self):
        """A deep copy of the result as a dict (``json.loads`` of ``attnsim run --json``)."""
        return copy.deepcopy(self._data)

    def __repr__(self):
        w, m = self.workload, self.metrics
        dram = m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0)
        return (f"<attnsim.Result {w.get('kernel')} on {self.device.get('name')}: "
                f"{m.get('gpu__time_duration.sum', float('nan')):.0f} ns, {dram:.0f} DRAM bytes, "
                f"{len(self.kernels)} launch(es)>")


def run(device=None, kernel="flash2", seq=None, head_dim=None, heads=None, *, workload=None,
        device_overrides=None, max_memory=None, progress=True, sim_mode=None, **keys):
    """Simulates one workload on one device: ``attnsim run --device DEVICE --kernel KERNEL --set ...``.

    device            preset name (``devices()``) or a device YAML path; None: the workload file's
                      own ``device:`` (a result point's config names it), else ``"h200"``
    kernel            kernel name (``kernels()``); ignored when ``workload`` (a YAML path) is given
    seq, head_dim, heads, **keys
                      workload keys (``workload_keys()``); None keeps the kernel's default
    device_overrides  dict of device keys, e.g. ``{"l2.capacity_bytes": 0}`` (L2 off)
    sim_mode          ``"full"`` or ``"sampled"``: the workload key ``sim.mode`` (docs/sampling.md)
    max_memory        refuse a run whose estimated peak memory exceeds this (bytes or "4 GiB")
    progress          a progress line on sys.stderr for a long run, as ``attnsim run`` prints it:
                      on a terminal or in a notebook after 1 s, redrawn in place; elsewhere a line
                      every 10 s
    Returns a Result. Raises ConfigError, SimulationError; KeyboardInterrupt on Ctrl-C.
    """
    keys = dict(seq=seq, head_dim=head_dim, heads=heads, **keys)
    if sim_mode is not None:
        keys["sim.mode"] = sim_mode
    text, series, period = _core.run("" if device is None else str(device), "" if workload else str(kernel),
                                     os.fspath(workload) if workload else "", _sets(keys, device_overrides),
                                     "" if max_memory is None else _value_text(max_memory), bool(progress),
                                     _stderr_is_terminal())
    return Result(json.loads(text), series, period)


def _spec_source(spec):
    """(path, text, name) of a sweep spec for the core: a YAML path, or a dict as JSON text."""
    if isinstance(spec, dict):
        return "", json.dumps(spec, indent=2), "<sweep dict>"
    return os.fspath(spec), "", ""


def sweep(spec, jobs=None, out=None, progress=True, resume=False, overrides=None):
    """Runs a sweep and returns its table: one row per point, the HDF5 /table columns.

    spec      a sweep YAML path, or a dict of the same shape (name, device, base, axes,
              constraints, ...; docs/hdf5-schema.md, README)
    overrides {key: value} for every point, after the spec's ``set`` (as ``attnsim sweep --set``),
              e.g. ``{"sim.mode": "sampled"}`` or ``{"device.l2.capacity_bytes": 0}``
    jobs      points run in parallel (default: the CPUs available); results do not depend on it
    out       write the results file here (as ``attnsim sweep --out``); default: a temporary
              file, removed after its table is read
    progress  progress on sys.stderr: a redrawn bar on a terminal or in a notebook, else a line
              per 5 % of the points
    resume    continue an interrupted sweep into ``out`` (as ``--resume``)
    The DataFrame's ``attrs`` hold ``path`` (out or None) and ``summary`` (point counts).
    Points whose simulation failed have status 'error' and raise a SweepWarning.
    """
    path, text, name = _spec_source(spec)
    if not jobs:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="attnsim-sweep-")
        target = os.path.join(tmp, "sweep.h5")
    else:
        target = os.fspath(out)
    try:
        sets = [_set_text(k, v) for k, v in (overrides or {}).items()]
        summary = _core.sweep(path, text, name, target, int(jobs), bool(progress), _stderr_is_terminal(),
                              bool(resume), f"attnsim.sweep({path or name!r}, jobs={jobs})", sets)
        df = read(target)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    df.attrs["path"] = None if tmp else target
    df.attrs["summary"] = summary
    if summary["error"]:
        warnings.warn(f"sweep: {summary['error']} of {summary['total']} points failed (status 'error')", SweepWarning,
                      stacklevel=2)
    return df


def sweep_plan(spec, overrides=None):
    """What sweep(spec) would run, without running it (``attnsim sweep FILE --dry-run``): a
    DataFrame, one row per point: ``point_index``, the point's keys, ``status`` ('ok', or
    'impossible' for a failed constraint, tiles the kernel refuses or an estimated peak memory
    over the memory guard's limit of half the physical RAM), the estimate of each ok point
    (``tile_ops`` of a full run, ``ctas``, ``peak_memory_bytes``) and the ``reason`` of each
    impossible one. ``spec`` and ``overrides`` as for sweep(). Raises ConfigError for a bad spec."""
    path, text, name = _spec_source(spec)
    sets = [_set_text(k, v) for k, v in (overrides or {}).items()]
    return pd.DataFrame(_core.sweep_plan(path, text, name, sets))


def _decode(values):
    if values.dtype.kind in ("S", "O"):
        return [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    return values


def _ordered_names(group):
    names = []
    try:
        import h5py
        group.id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
    except Exception:
        names = []
    return names if len(names) == len(group.keys()) else list(group.keys())


def read(path):
    """The /table of an attnsim results file (``sweep --out``, ``run --out``, ``formulas --out``) as
    a DataFrame, columns in the file's order; ``attrs`` hold the root attributes (provenance)."""
    import h5py
    if not h5py.is_hdf5(os.fspath(path)):  # FileNotFoundError when missing
        raise ConfigError(f"{path}: not an HDF5 file")
    with h5py.File(os.fspath(path), "r") as f:
        if "table" not in f:
            raise ConfigError(f"{path}: no /table group (not an attnsim results file?)")
        g = f["table"]
        df = pd.DataFrame({c: _decode(g[c][()]) for c in _ordered_names(g)})
        df.attrs.update({k: (v.decode() if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v)
                         for k, v in f.attrs.items()})
    df.attrs["path"] = os.fspath(path)
    return df


def _metrics(group, launch=False):
    """A metrics group as ``run --json`` gives it: with the text-valued attnsim__bound and, for a
    launch (``launch``), its attnsim__occupancy_limiter, derived by the same rules."""
    if "metrics" not in group:
        return {}
    out = {(r["name"].decode() if isinstance(r["name"], bytes) else str(r["name"])): float(r["value"])
           for r in group["metrics"][()]}
    values = list(out.items())
    bound = _core.bound_of(values)
    if bound:
        out["attnsim__bound"] = bound
    limiter = _core.occupancy_limiter_of(values) if launch else ""
    if limiter:
        out["attnsim__occupancy_limiter"] = limiter
    return out


def _tensors(group):
    if "tensors" not in group:
        return {}
    t = group["tensors"]
    names = _decode(t["names"][()])
    columns = _decode(t["columns"][()]) if "columns" in t else [
        f"{lvl}_{d}" for lvl in LEVELS for d in DIRECTIONS]
    data = t["bytes"][()]
    out = {}
    for i, name in enumerate(names):
        levels = {}
        for j, col in enumerate(columns):
            lvl, d = col.rsplit("_", 1)
            levels.setdefault(lvl, {})[d] = int(data[i, j])
        out[name] = levels
    return out


def read_point(path, index):
    """Point ``index`` (its point_index) of a results file as a Result (no ``device`` numbers:
    ``workload`` is the point's resolved config, device name included)."""
    import h5py
    import yaml
    with h5py.File(os.fspath(path), "r") as f:
        g = f.get(f"points/{int(index)}")
        if g is None:
            raise ConfigError(f"{path}: no point {index}")
        status = g.attrs.get("status", "ok")
        status = status.decode() if isinstance(status, bytes) else str(status)
        cfg = g["config"][()] if "config" in g else b""
        cfg = yaml.safe_load(cfg.decode() if isinstance(cfg, bytes) else str(cfg)) or {}
        data = {"workload": {k: v for k, v in cfg.items() if not k.startswith("device")},
                "device": {"name": cfg.get("device")}, "status": status,
                "kernels": [], "metrics": _metrics(g), "tensors": _tensors(g)}
        if "device_overrides" in cfg:
            data["device"]["overrides"] = cfg["device_overrides"]
        if "kernels" in g:
            for k in _ordered_names(g["kernels"]):
                kg = g["kernels"][k]
                name = kg.attrs.get("name", k.split("_", 1)[-1])
                data["kernels"].append({"name": name.decode() if isinstance(name, bytes) else str(name),
                                        "metrics": _metrics(kg, launch=True), "tensors": _tensors(kg)})
        series, period = {}, None
        if "series" in g:
            s = g["series"]
            series = {c: s[c][()] for c in _ordered_names(s)}
            period = float(s.attrs.get("period_ns", np.nan))
    return Result(data, series, period)


def rerun(path, index, device=None, device_overrides=None, max_memory=None, progress=True, **keys):
    """Runs point ``index`` of a results file again from the config stored with it (its
    workload, device and device overrides: ``attnsim run --workload CONFIG``), e.g. with other
    keys (``sim_mode="full"``, ``block_n=64``) or on another ``device``. Returns a Result."""
    import h5py
    import tempfile
    with h5py.File(os.fspath(path), "r") as f:
        g = f.get(f"points/{int(index)}")
        if g is None or "config" not in g:
            raise ConfigError(f"{path}: no point {index}")
        status = g.attrs.get("status", "ok")
        status = status.decode() if isinstance(status, bytes) else str(status)
        if status != "ok":
            raise ConfigError(f"{path}: point {index} is {status}; its config holds the raw parameter values")
        cfg = g["config"][()]
    with tempfile.TemporaryDirectory() as d:
        config = os.path.join(d, f"point_{int(index)}.yaml")
        with open(config, "wb") as out:
            out.write(cfg if isinstance(cfg, bytes) else str(cfg).encode())
        return run(device, workload=config, device_overrides=device_overrides, max_memory=max_memory,
                   progress=progress, **keys)


def cli(*args):
    """Runs ``attnsim ARGS...`` in this process; returns its standard output. A non-zero exit code
    that is not an error (``check`` finding a mismatch: 1) is returned as ``(code, text)``.
    Progress (``run``) goes to sys.stderr. Raises ConfigError (bad arguments or input, ``sweep``:
    use sweep()), SimulationError; KeyboardInterrupt on Ctrl-C (``run`` and ``check`` stop within
    moments)."""
    if args and str(args[0]) == "sweep":
        raise ConfigError("cli: use attnsim.sweep() for sweeps (the command's MPI set-up is not for a Python process)")
    code, text = _core.cli([str(a) for a in args], _stderr_is_terminal())
    return text if code == 0 else (code, text)


def cta_timeline(device="h200", kernel="flash2", seq=None, head_dim=None, heads=None, *, ctas=(0,), workload=None,
                 device_overrides=None, sim_mode=None, **keys):
    """The op timeline of CTAs ``ctas`` (indices in dispatch order, or a list such as "0,5-7"):
    ``attnsim run ... --trace FILE --trace-ctas LIST``. The workload arguments are run()'s.
    Returns a DataFrame, one row per op of each traced CTA's warp groups: launch, kernel, cta, sm,
    group, step, op, kind, tensor, detail, bytes, start/end/ready cycles, start/end µs
    (docs/cli.md, "Op timelines"). Raises ConfigError (the CLI's message), SimulationError."""
    keys = dict(seq=seq, head_dim=head_dim, heads=heads, **keys)
    if sim_mode is not None:
        keys["sim.mode"] = sim_mode
    argv = ["run", "--device", str(device)]
    argv += ["--workload", os.fspath(workload)] if workload else ["--kernel", str(kernel)]
    for s in _sets(keys, device_overrides):
        argv += ["--set", s]
    listed = ctas if isinstance(ctas, str) else ",".join(str(int(c)) for c in ctas)
    with tempfile.TemporaryDirectory(prefix="attnsim-trace-") as d:
        path = os.path.join(d, "trace.tsv")
        _core.cli(argv + ["--trace", path, "--trace-ctas", listed], _stderr_is_terminal())
        return pd.read_csv(path, sep="\t", keep_default_na=False)


def _options(options):
    argv = []
    for k, v in options.items():
        if v is None or v is False:
            continue
        flag = "--" + k.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif isinstance(v, (list, tuple)) and k == "set":
            for item in v:
                argv += [flag, str(item)]
        else:
            argv += [flag, _value_text(v)]
    return argv


def _json_command(name, options):
    code, text = _core.cli([name] + _options(options) + ["--json"])
    return json.loads(text)


def formulas(seq=None, tile=64, **options):
    """Closed-form byte counts (``attnsim formulas --json``): the score matrix and tile bytes for
    seq (or seq_q, seq_kv) and tile, bytes_per_value or dtype; with head_dim (and heads, batch,
    kv_heads, block_m, block_n, sram_bytes, causal, pass_) also the HBM traffic per tensor of the
    standard, flash1 and flash2 kernels with the L2 off. Returns a dict."""
    if "pass_" in options:
        options["pass"] = options.pop("pass_")
    return _json_command("formulas", dict(seq=seq, tile=tile, **options))


def occupancy(device="h200", threads=128, regs=255, smem=0, carveout=None, device_overrides=None):
    """CUDA occupancy rules for a block shape (``attnsim occupancy --json``): blocks per SM, the
    limiter, achieved warps. Returns a dict."""
    sets = _sets({}, device_overrides)
    return _json_command("occupancy", dict(device=device, threads=threads, regs=regs, smem=smem, carveout=carveout,
                                           set=sets))


def softmax_trace(scores, block):
    """The online softmax walked block by block (``attnsim softmax-trace --json``): running max m,
    sum l and rescale factors per block. ``scores`` is a list of numbers. Returns a dict."""
    text = ",".join(_value_text(s) for s in scores) if not isinstance(scores, str) else scores
    return _json_command("softmax-trace", dict(scores=text, block=block))


def check(file=None, device=None, device_overrides=None, **keys):
    """Simulated HBM bytes vs the closed forms with the L2 off (``attnsim check``) for a workload
    or sweep YAML ``file``, or the built-in grid. Returns (passed: bool, report text); exit code 1
    (a mismatch) is passed=False, bad input raises ConfigError; Ctrl-C raises KeyboardInterrupt
    (within moments: the check stops inside a workload, at its next row of functional mode)."""
    argv = ["check"] + ([os.fspath(file)] if file else []) + (["--device", str(device)] if device else [])
    for s in _sets(keys, device_overrides):
        argv += ["--set", s]
    code, text = _core.cli(argv)
    return code == 0, text


def devices():
    """The device presets as a DataFrame: one row per preset, its key numbers (units in the
    column names: bytes, Hz, ...)."""
    return pd.DataFrame([_core.device_fields(n) for n in _core.device_presets()])


def device(name, **overrides):
    """The resolved device (preset name or YAML path, with ``overrides`` of device keys such as
    ``**{"l2.capacity_bytes": 0}``) as a dict, every key the loader knows."""
    import yaml
    return yaml.safe_load(_core.device_yaml(str(name), _sets({}, overrides)))


def kernels():
    """The kernel names ``run`` accepts."""
    return list(_core.kernel_names())


from . import plot  # noqa: E402  (attnsim.plot: the course figures; after the names it uses)

# What each workload key means (docs/kernels.md has the details; the resolved defaults come from
# the C++ loader, never from here).
_KEY_DOC = {
    "kernel": ("", "kernel to simulate (kernels())"),
    "batch": ("", "batch size"),
    "heads": ("", "query heads"),
    "kv_heads": ("", "key/value heads (default: heads)"),
    "seq_q": ("tokens", "query sequence length (seq sets seq_q and seq_kv)"),
    "seq_kv": ("tokens", "key/value sequence length (seq sets seq_q and seq_kv)"),
    "head_dim": ("elements", "head dimension"),
    "dtype": ("", "fp16, bf16, fp32, fp8"),
    "causal": ("", "causal mask"),
    "pass": ("", "fwd or fwdbwd"),
    "block_m": ("rows", "query rows per tile"),
    "block_n": ("rows", "key/value rows per tile"),
    "block_k": ("elements", "k-tile of the standard kernel's GEMMs"),
    "gemm_ws": ("", "standard on sm_90+: warp-specialized GEMMs (TMA producer, wgmma consumers); off by default"),
    "scale_kernel": ("", "standard: the scores scaled by their own elementwise kernel ((q @ k^T) * scale), and its backward"),
    "qkv_packed": ("", "standard, forward: q, k, v views of one packed [B, N, 3, H, d] tensor (three layout copies)"),
    "pytorch": ("", "standard: the PyTorch release whose eager softmax kernels run (2.11 default; before 2.4: the three-pass block kernel)"),
    "gemm_cluster": ("CTAs", "CTAs sharing an operand chunk in the standard kernel's GEMMs"),
    "warps": ("warps", "warps per CTA"),
    "stages": ("", "cp.async pipeline stages"),
    "cta_order": ("", "row-major or head-major"),
    "impl": ("", "flash2's implementation: fa2 (Dao-AILab CUDA) or triton"),
    "regs_per_thread": ("registers", "override of the kernel's register count"),
    "smem_per_cta": ("bytes", "override of the kernel's shared memory per CTA"),
    "stack_frame_bytes": ("bytes", "register-spill stack frame per thread (flash2 forward)"),
    "num_splits": ("", "KV splits of flash_decode"),
    "page_size": ("tokens", "tokens per K/V page of flash_decode's block table (0: contiguous cache)"),
    "page_placement": ("", "contiguous or shuffled pages in the pool (flash_decode, page_size > 0)"),
    "page_seed": ("", "seed of the shuffled page placement"),
    "kv_lengths": ("tokens", "per-sequence KV lengths of flash_decode: N, [a, b, ...] or {uniform: [min, max], seed: s}"),
    "consumer_warpgroups": ("", "flash3's consumer warp groups of 64 query rows (block_m = 64 x it)"),
    "pingpong": ("", "flash3: named-barrier ping-pong of the consumer warp groups' GEMMs (-1: FA-3's choice)"),
    "intrawg_overlap": ("", "flash3: softmax of block j under the QK^T of block j+1 (-1: FA-3's choice)"),
    "tma": ("", "flash2 impl triton: Q/K/V by TMA descriptors (1) or cp.async (0, the default); -1: not set"),
    "sram_bytes": ("bytes", "on-chip memory M of the Flash papers' block sizes (0: the device's)"),
    "functional": ("", "also execute the schedule on numbers (functional max_rel_error)"),
    "seed": ("", "random seed of functional mode"),
    "functional_inputs": ("", "functional mode's inputs: normal (N(0,1)) or outliers (FA-3 paper's error test)"),
    "fp8_scales": ("", "functional mode's FP8 quantization scales: head, block or none"),
    "incoherent_processing": ("", "functional mode: Q and K rotated by random signs + Hadamard before FP8"),
    "working_set_bytes": ("bytes", "pointer_chase working set"),
    "loads": ("", "pointer_chase dependent loads"),
    "programs": ("CTAs", "stream_read / stream_copy CTAs"),
    "bytes_per_step": ("bytes", "stream_read / stream_copy bytes per step"),
    "total_bytes": ("bytes", "stream_read / stream_copy bytes in all"),
}


def workload_keys(kernel="flash2"):
    """The workload keys with ``kernel``'s defaults (resolved by the C++ loader), units and a
    description, as a DataFrame (key, default, unit, description)."""
    rows = []
    for k, v in _core.workload_fields(str(kernel), []).items():
        unit, doc = _KEY_DOC.get(k, ("", ""))
        rows.append((k, v, unit, doc))
    return pd.DataFrame(rows, columns=["key", "default", "unit", "description"])
