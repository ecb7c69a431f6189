"""Reading attnsim results files (docs/hdf5-schema.md) for the summary and figure scripts.

Shared helpers only: the /table columns as a dict of numpy arrays, per-point kernel metrics,
per-point time series, device presets (configs/devices/*.yaml) and the greyscale-safe plot
styles. Runs under /usr/bin/python3 (h5py, numpy, matplotlib with the Agg backend).
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Distinct markers, line styles and hatches so every figure reads in greyscale.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
HATCHES = ["//", "..", "xx", "\\\\", "oo", "--", "++", "**", "||", "O", "/.", "\\|", "x.", "-/", "+o"]
GREYS = ["0.0", "0.35", "0.6", "0.2", "0.5", "0.75"]

STATUS_OK = "ok"


def _decode(values):
    if values.dtype.kind in ("S", "O"):
        return np.array([v.decode() if isinstance(v, bytes) else str(v) for v in values], dtype=object)
    return values


# DataFrames handed to the figure scripts by attnsim.plot (docs/python.md), by token.
_FRAMES = {}


def register_frame(df):
    """A name under which Results(name) reads `df` (a pandas DataFrame of a results table, as
    attnsim.sweep / attnsim.read return it) instead of a file."""
    token = f"<DataFrame {len(_FRAMES) + 1}>"
    _FRAMES[token] = df
    return token


class Results:
    """One results file: the /table columns, and lazy access to /points/<i>. `path` may also be a
    pandas DataFrame of the table (or register_frame's name for one): its /points come from the
    file in df.attrs["path"] when it names one, else the per-point data is empty."""

    def __init__(self, path):
        frame = _FRAMES.get(path) if isinstance(path, str) else path
        if frame is not None and not isinstance(frame, (str, os.PathLike)):
            self._from_frame(path if isinstance(path, str) else "<DataFrame>", frame)
            return
        self.path = path
        self.file = h5py.File(path, "r")
        if "table" not in self.file:
            raise SystemExit(f"{path}: no /table group (not an attnsim results file?)")
        grp = self.file["table"]
        self.columns = list(grp.keys())
        # Keep the writer's column order (creation order) when the group tracks it.
        try:
            names = []
            grp.id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
            if len(names) == len(self.columns):
                self.columns = names
        except Exception:  # order not tracked: alphabetical is fine
            pass
        self.table = {c: _decode(grp[c][()]) for c in self.columns}
        self.rows = len(self.table[self.columns[0]]) if self.columns else 0

    def _from_frame(self, name, df):
        self.path = name
        source = df.attrs.get("path")
        self.file = h5py.File(source, "r") if source and os.path.exists(source) else {}
        self.columns = [str(c) for c in df.columns]
        self.table = {c: _decode(df[c].to_numpy()) for c in self.columns}
        self.rows = len(df)

    def close(self):
        if hasattr(self.file, "close"):
            self.file.close()

    def col(self, name, default=np.nan):
        if name in self.table:
            return self.table[name]
        return np.full(self.rows, default, dtype=object if isinstance(default, str) else float)

    def has(self, name):
        return name in self.table

    def status(self):
        if "status" in self.table:
            return self.table["status"]
        return np.array([STATUS_OK] * self.rows, dtype=object)

    def ok(self):
        return np.array([s == STATUS_OK for s in self.status()])

    def param_columns(self):
        """Swept parameters: every column but point_index/status/reason and the metrics (whose
        Nsight Compute / attnsim__ names contain '__')."""
        return [c for c in self.columns if c not in ("point_index", "status", "reason") and "__" not in c]

    def varying_params(self):
        """Parameters that take more than one value over the rows."""
        out = []
        for c in self.param_columns():
            vals = self.table[c]
            if len({str(v) for v in vals}) > 1:
                out.append(c)
        return out

    def point_index(self, row):
        if "point_index" in self.table:
            return int(self.table["point_index"][row])
        return row

    def point_group(self, row):
        pts = self.file.get("points")
        if pts is None:
            return None
        return pts.get(str(self.point_index(row)))

    def kernels(self, row):
        """[(name, {metric: value})] for each kernel launched at this row's point."""
        g = self.point_group(row)
        if g is None or "kernels" not in g:
            return []
        out = []
        names = []
        try:
            g["kernels"].id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
        except Exception:
            names = sorted(g["kernels"].keys(), key=lambda s: int(s.split("_", 1)[0]) if s.split("_", 1)[0].isdigit() else 0)
        for k in names:
            kg = g["kernels"][k]
            name = kg.attrs.get("name", k.split("_", 1)[-1])
            if isinstance(name, bytes):
                name = name.decode()
            out.append((str(name), read_metrics(kg)))
        return out

    def series(self, row):
        """(period_ns, {name: array}) of the point's joined time series, or (None, {})."""
        g = self.point_group(row)
        if g is None or "series" not in g:
            return None, {}
        s = g["series"]
        return float(s.attrs.get("period_ns", np.nan)), {k: s[k][()] for k in s.keys()}

    def config_text(self, row):
        g = self.point_group(row)
        if g is None or "config" not in g:
            return ""
        v = g["config"][()]
        return v.decode() if isinstance(v, bytes) else str(v)


def read_metrics(group):
    """The compound 'metrics' dataset (name, value) of a point or kernel group as a dict."""
    if "metrics" not in group:
        return {}
    out = {}
    for rec in group["metrics"][()]:
        name = rec["name"]
        out[name.decode() if isinstance(name, bytes) else str(name)] = float(rec["value"])
    return out


def kernel_metric(res, row, name, reduce="max"):
    """A launch__* metric, which the table does not total: from the point's kernels."""
    if res.has(name):
        return float(res.col(name)[row])
    vals = [m[name] for _, m in res.kernels(row) if name in m]
    if not vals:
        return np.nan
    return max(vals) if reduce == "max" else min(vals)


def _scalar(text):
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if t.startswith("[") and t.endswith("]"):
        return [_scalar(x) for x in t[1:-1].split(",") if x.strip()]
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_simple_yaml(text):
    """The YAML subset attnsim writes and ships (nested block mappings of scalars, inline
    lists, '#' comments). Uses PyYAML when installed; this fallback keeps the scripts free of
    packages scripts/setup.sh does not install."""
    try:
        import yaml

        return yaml.safe_load(text) or {}
    except ImportError:
        pass
    root = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() or ":" not in line:
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if value.strip() == "":
            parent[key] = {}
            stack.append((indent, parent[key]))
        else:
            parent[key] = _scalar(value)
    return root


def load_device(name):
    """A device preset's YAML as a dict (configs/devices/<name>.yaml, or a path)."""
    path = name if os.path.exists(name) else os.path.join(ROOT, "configs", "devices", f"{name}.yaml")
    with open(path) as f:
        return parse_simple_yaml(f.read())


def attnsim_binary():
    b = os.environ.get("ATTNSIM")
    if b and os.path.exists(b):
        return b
    for d in ("build", "build-figures"):
        p = os.path.join(ROOT, d, "attnsim")
        if os.path.exists(p):
            return p
    return None


def attnsim_json(args):
    """Runs `attnsim ARGS --json` and returns the parsed object, or None if it cannot."""
    b = attnsim_binary()
    if b is None:
        return None
    try:
        out = subprocess.run([b] + args + ["--json"], check=True, capture_output=True, text=True, timeout=60)
        return json.loads(out.stdout)
    except (subprocess.SubprocessError, json.JSONDecodeError, OSError) as e:
        print(f"warning: attnsim {' '.join(args)}: {e}", file=sys.stderr)
        return None


def fmt_bytes(b):
    if b is None or (isinstance(b, float) and not np.isfinite(b)):
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(b) >= scale:
            return f"{b / scale:.3f} {unit}"
    return f"{b:.0f} B"


def savefig(fig, path):
    """Saves in the format the extension names (png, svg, pdf)."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in ("png", "svg", "pdf"):
        raise SystemExit(f"{path}: output must end in .png, .svg or .pdf")
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(path, format=ext, dpi=150 if ext == "png" else None, bbox_inches="tight")


OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"


def achieved_occupancy(res):
    """Achieved occupancy (%) per row: the table column if it has one, else the kernels'
    values weighted by each kernel's gpu__time_duration.sum (the run's time-weighted mean)."""
    out = np.full(res.rows, np.nan)
    if res.has(OCCUPANCY):
        out = res.col(OCCUPANCY).astype(float)
    ok = res.ok()
    for i in range(res.rows):
        if np.isfinite(out[i]) or not ok[i]:
            continue
        num = den = 0.0
        for _, m in res.kernels(i):
            if OCCUPANCY in m:
                t = m.get("gpu__time_duration.sum", 1.0)
                num += m[OCCUPANCY] * t
                den += t
        if den > 0:
            out[i] = num / den
    return out


def dram_bytes(res):
    return res.col("dram__bytes_read.sum").astype(float) + res.col("dram__bytes_write.sum").astype(float)


def point_config(res, row):
    """The point's resolved config (/points/<i>/config YAML) as a dict."""
    text = res.config_text(row)
    return parse_simple_yaml(text) if text else {}


def param(res, row, key):
    """A workload value of a row: its table column if swept, else the point's resolved config."""
    if res.has(key):
        return res.table[key][row]
    cfg = point_config(res, row)
    if key in cfg:
        return cfg[key]
    if key == "seq_q" or key == "seq_kv":
        return cfg.get("seq")
    return None


def label_for(key, value):
    """Human-readable legend text for a parameter value."""
    if key == "device.l2.capacity_bytes":
        v = float(value)
        return "L2 off (every access reaches HBM)" if v == 0 else f"L2 {v / 2**20:.0f} MiB"
    return f"{key} = {value}"
