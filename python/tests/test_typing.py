"""The package's type hints hold: mypy --strict finds nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("mypy")


def test_the_package_type_checks_strictly():
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--config-file", str(ROOT / "python" / "pyproject.toml"), str(ROOT / "python" / "gentle")],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_native_modules_stub_matches_the_built_module():
    # mypy.stubtest imports gentle._gentle and compares every name, signature and
    # class with python/gentle/_gentle.pyi.
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "gentle._gentle"],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
