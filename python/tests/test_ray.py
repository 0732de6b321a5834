"""The Ray backend on a local Ray cluster: identical results to the local backend,
a worker that dies has its points rerun, and `gentle sweep --backend ray`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import gentle  # noqa: E402
from conftest import cli, tree_bytes  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    marker = tmp_path_factory.mktemp("fault") / "died"
    # The first task's worker dies (once): Ray must run its points again.
    os.environ["GENTLE_RAY_FAULT_ONCE"] = str(marker)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield marker
    ray.shutdown()
    os.environ.pop("GENTLE_RAY_FAULT_ONCE", None)


def test_ray_and_local_give_identical_files(cluster, small_sweep, tmp_path):
    gentle.sweep(small_sweep, tmp_path / "local", progress=False)
    r = gentle.sweep(small_sweep, tmp_path / "ray", backend="ray", progress=False)
    assert "ray:" in r.text
    assert tree_bytes(tmp_path / "ray") == tree_bytes(tmp_path / "local")
    # A worker died on the way, and its points were rerun.
    assert cluster.exists()


def test_ray_resume(cluster, small_sweep, tmp_path):
    gentle.sweep(small_sweep, tmp_path / "local", progress=False)
    gentle.sweep(small_sweep, tmp_path / "r", point="network=fast", backend="ray", progress=False)
    assert len(list((tmp_path / "r" / "records").iterdir())) == 3
    gentle.sweep(small_sweep, tmp_path / "r", backend="ray", resume=True, progress=False)
    assert tree_bytes(tmp_path / "r") == tree_bytes(tmp_path / "local")


def test_the_command_line_on_the_cluster(cluster, small_sweep, tmp_path):
    address = ray.get_runtime_context().gcs_address
    env = dict(os.environ, GENTLE_PYTHON=sys.executable)
    out = cli(
        ["sweep", str(small_sweep), "--out", str(tmp_path / "c"), "--address", address],
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "small-sweep: 6 points" in out.stdout
    gentle.sweep(small_sweep, tmp_path / "local", progress=False)
    assert tree_bytes(tmp_path / "c") == tree_bytes(tmp_path / "local")
