"""The notebooks of docs/notebooks run with this build and print what they store; scripts/run_notebook.py catches what differs."""
import copy
import glob
import json
import os
import subprocess

import pytest

from conftest import ROOT, python_path

RUNNER = os.path.join(ROOT, "scripts", "run_notebook.py")
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "docs", "notebooks", "*.ipynb")))


def run_notebook(*args):
    env = dict(os.environ, ATTNSIM_PYTHONPATH=python_path(), MPLBACKEND="Agg")
    return subprocess.run(["/usr/bin/python3", RUNNER, *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture
def module_built(attnsim):  # the notebooks import attnsim: skip where ATTNSIM_PYTHON=off says it is not built
    return attnsim


def test_there_is_a_notebook():
    assert NOTEBOOKS, "docs/notebooks has no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_prints_what_it_stores(module_built, path):
    p = run_notebook(path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "outputs as stored" in p.stdout
    nb = json.load(open(path, encoding="utf-8"))
    stored = sum(len(c["outputs"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert stored > 0, "the committed notebook stores no outputs (run scripts/run_notebook.py --update)"


# The keys nbformat 4's schema requires (and allows) per cell and output: Jupyter refuses a
# notebook that breaks them, which running the cells here would not notice.
CELL_KEYS = {"markdown": {"cell_type", "metadata", "source"},
             "code": {"cell_type", "execution_count", "metadata", "outputs", "source"}}
OUTPUT_KEYS = {"stream": {"output_type", "name", "text"},
               "execute_result": {"output_type", "execution_count", "data", "metadata"},
               "display_data": {"output_type", "data", "metadata"}}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_has_the_shape_jupyter_reads(path):
    nb = json.load(open(path, encoding="utf-8"))
    assert set(nb) == {"cells", "metadata", "nbformat", "nbformat_minor"} and nb["nbformat"] == 4
    assert nb["metadata"]["kernelspec"]["language"] == "python"
    for i, cell in enumerate(nb["cells"]):
        assert set(cell) == CELL_KEYS[cell["cell_type"]], f"cell {i}: {sorted(cell)}"
        assert all(isinstance(line, str) for line in cell["source"]), f"cell {i}: source is not a list of lines"
        for out in cell.get("outputs", []):
            assert set(out) == OUTPUT_KEYS[out["output_type"]], f"cell {i}: output {sorted(out)}"
            for mime, value in out.get("data", {}).items():
                assert isinstance(value, str if mime == "image/png" else list), f"cell {i}: {mime}"


def small_notebook(cells, tags=None):
    def code(source, outputs=(), tagged=None):
        cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": list(outputs),
                "source": source.splitlines(keepends=True)}
        if tagged:
            cell["metadata"]["tags"] = tagged
        return cell
    return {"cells": [code(*c) for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}


def test_stored_outputs_are_compared_and_updated(module_built, tmp_path):
    path = tmp_path / "small.ipynb"
    nb = small_notebook([("import attnsim\nprint(sorted(attnsim.kernels())[:2])",),
                         ("x = 6 * 7\nx",),
                         ("import time\ntime.time()", (), ["varies"])])
    path.write_text(json.dumps(nb))
    p = run_notebook(str(path))
    assert p.returncode == 1 and "code cell 1" in p.stderr, p.stderr  # nothing stored yet
    p = run_notebook("--update", str(path))
    assert p.returncode == 0, p.stderr
    stored = json.loads(path.read_text())
    assert "".join(stored["cells"][0]["outputs"][0]["text"]) == "['flash1', 'flash2']\n"
    assert stored["cells"][1]["outputs"][0]["data"]["text/plain"] == ["42"]
    assert stored["cells"][1]["execution_count"] == 2
    p = run_notebook(str(path))
    assert p.returncode == 0 and "outputs as stored" in p.stdout, p.stdout + p.stderr  # the "varies" cell moved
    changed = copy.deepcopy(stored)
    changed["cells"][1]["outputs"][0]["data"]["text/plain"] = ["41"]
    path.write_text(json.dumps(changed))
    p = run_notebook(str(path))
    assert p.returncode == 1 and "code cell 2" in p.stderr and "--update" in p.stderr, p.stderr


def test_a_cell_that_raises_or_a_file_that_is_no_notebook(module_built, tmp_path):
    path = tmp_path / "raises.ipynb"
    path.write_text(json.dumps(small_notebook([("print('before')",), ("1 / 0",)])))
    p = run_notebook(str(path))
    assert p.returncode == 3 and "ZeroDivisionError" in p.stderr and "code cell 2" in p.stderr, p.stderr
    other = tmp_path / "other.ipynb"
    other.write_text("{}")
    p = run_notebook(str(other))
    assert p.returncode == 2 and "not an nbformat 4 notebook" in p.stderr, p.stderr
