"""Shared pytest fixtures of the Python tests (run by scripts/test.sh: /usr/bin/python3 -m pytest scripts/tests).

Fixtures:
  attnsim_bin  path of the attnsim binary ($ATTNSIM, else build/attnsim); skips the test when it is
               not built and $ATTNSIM is unset (scripts/test.sh always sets it)
  attnsim      the Python module from build/python ($ATTNSIM_PYTHONPATH overrides); a test fails when
               it cannot be imported, unless ATTNSIM_PYTHON=off (a build without it) skips it
  check        soft assertion: check(cond, what) records a failure and goes on, so a test reports
               every check that failed; the test fails at its end if any did
  tmp_path     pytest's own: a fresh directory per test
Plain `def test_*()` functions with asserts need none of these.
"""
import importlib
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for d in (os.path.join(ROOT, "scripts"), os.path.dirname(os.path.abspath(__file__))):
    if d not in sys.path:
        sys.path.insert(0, d)


def binary_path():
    return os.environ.get("ATTNSIM") or os.path.join(ROOT, "build", "attnsim")


def python_path():
    return os.environ.get("ATTNSIM_PYTHONPATH") or os.path.join(os.path.dirname(os.path.abspath(binary_path())), "python")


@pytest.fixture(scope="session")
def attnsim_bin():
    path = binary_path()
    if not os.path.exists(path):
        if os.environ.get("ATTNSIM"):
            pytest.fail(f"ATTNSIM={path} does not exist")
        pytest.skip(f"{path} not built")
    return path


@pytest.fixture(scope="session")
def attnsim():
    if os.environ.get("ATTNSIM_PYTHON", "").lower() == "off":
        pytest.skip("the Python module is not built here (ATTNSIM_PYTHON=off)")
    path = python_path()
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        return importlib.import_module("attnsim")
    except ImportError as e:
        pytest.fail(f"cannot import attnsim from {path}: {e}")


class Checks:
    """check(cond, what): prints ok/FAIL and records failures (shown when the test fails)."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)
        return cond


@pytest.fixture
def check():
    return Checks()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that passed its own asserts but recorded failed checks is reported failed, each failed
    check listed."""
    outcome = yield
    report = outcome.get_result()
    checks = getattr(item, "funcargs", {}).get("check")
    if report.when == "call" and report.passed and isinstance(checks, Checks) and checks.failures:
        report.outcome = "failed"
        report.longrepr = f"{len(checks.failures)} check(s) failed:\n" + "\n".join("  " + f for f in checks.failures)
