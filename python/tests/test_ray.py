"""The Ray backend on a local Ray cluster: identical results to the local backend,
a worker that dies has its points rerun, and `gentle sweep --backend ray`."""

from __future__ import annotations

import json
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


CALIBRATE = """name = "fit-on-ray"
seed = 3
trials = 400
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "30ms"
a_to_b = { loss = { model = "bernoulli", p = 0.02 } }
[[workload]]
client = "client"
server = "server"
request = "300B"
response = "6KB"
exchanges = 2
connection = "persistent"
think = "100ms"
[[variant]]
name = "Linux"
profile = "linux-3.10"
[calibrate]
trials = 200
candidates = 30
[calibrate.free]
link.a_to_b.loss.p = { min = 0.001, max = 0.1, log = true }
"""

TARGETS = """[[target]]
stat = "RetransSegs / OutSegs"
value = 0.05
source = "made up for the test"
"""


def test_calibrate_runs_its_candidates_on_the_cluster(cluster, tmp_path):
    scn, targets = tmp_path / "fit.toml", tmp_path / "targets.toml"
    scn.write_text(CALIBRATE)
    targets.write_text(TARGETS)
    address = ray.get_runtime_context().gcs_address
    env = dict(os.environ, GENTLE_PYTHON=sys.executable)
    fitted = []
    for run in ["a", "b"]:
        out = tmp_path / f"{run}.toml"
        r = cli(
            ["calibrate", str(scn), "--targets", str(targets), "--out", str(out),
             "--address", address, "--json"],
            env=env,
        )
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        fitted.append(out.read_text())
    # The same seed fits the same on the cluster; the fit moved the loss rate up
    # towards the target (2% of packets lost retransmits under 5% of segments).
    assert fitted[0] == fitted[1]
    assert report["loss"] < report["loss_as_written"], report
    assert "p = 0.02 }" not in fitted[0]
    # A bad targets file is refused before anything runs, with its place.
    targets.write_text(TARGETS.replace("RetransSegs", "RetransSgs"))
    r = cli(
        ["calibrate", str(scn), "--targets", str(targets), "--out", str(tmp_path / "c.toml"),
         "--address", address],
        env=env,
    )
    assert r.returncode == 2 and "RetransSgs" in r.stderr, r.stderr
    assert not (tmp_path / "c.toml").exists()
    # --only on the cluster: the named parameter refitted as a whole fit moves it,
    # under a header of its own above the earlier one; a name that is not free is
    # refused before anything runs.
    targets.write_text(TARGETS)
    scn.write_text("# Fitted by `gentle calibrate x`:\n# 0 of 1 targets\n" + CALIBRATE)
    only = tmp_path / "only.toml"
    for name, code in [("link.rate", 2), ("link.a_to_b.loss.p", 0)]:
        r = cli(
            ["calibrate", str(scn), "--targets", str(targets), "--out", str(only),
             "--address", address, "--only", name],
            env=env,
        )
        assert r.returncode == code, r.stderr
        if code == 2:
            assert "`link.rate` is not a free parameter" in r.stderr, r.stderr
            assert not only.exists()
    lines = only.read_text().splitlines()
    assert lines[0].startswith("# Refitted by `gentle calibrate") and lines[0].endswith(
        "--only link.a_to_b.loss.p`:"), lines[0]
    assert lines[2] == "# Fitted by `gentle calibrate x`:", lines[:4]
    assert lines[4:] == fitted[0].splitlines()[2:]


def _captures(tmp_path: Path) -> Path:
    """Two captures of the frontend example (trials 0 and 1, the second in a
    subdirectory) and one with no TCP in it, which every backend skips."""
    caps = tmp_path / "caps"
    example = Path(__file__).resolve().parents[2] / "examples" / "analyze-frontend.toml"
    for k, sub in [(0, "a"), (1, "b/deeper")]:
        r = cli(["run", str(example), "--trials", str(k + 1), "--pcap", str(k),
                 "--out", str(caps / sub)])
        assert r.returncode == 0, r.stderr
    first = caps / "a" / "analyze-frontend-trial0-linux-3.10.pcap"
    (caps / "b" / "empty.pcap").write_bytes(first.read_bytes()[:24])
    return caps


def test_analyze_on_ray_writes_the_local_tables(cluster, tmp_path):
    from gentle._ray import analyze_on_ray

    caps = _captures(tmp_path)
    local = cli(["analyze", str(caps), "--parquet", str(tmp_path / "local")])
    assert local.returncode == 0, local.stderr
    report = analyze_on_ray([str(caps)], str(tmp_path / "ray"), progress=False)
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == [
        "exchanges.parquet", "flows.parquet", "retransmissions.parquet", "signatures.parquet"]
    assert tree_bytes(tmp_path / "ray") == tree_bytes(tmp_path / "local")
    # The same report but for where it ran: the empty capture skipped alike.
    first, rest = report.split("\n", 1)
    assert "Ray, " in first and "(1 skipped)" in first, first
    assert rest == local.stdout.split("\n", 1)[1]
    # Existing tables are kept without force.
    with pytest.raises(gentle.GentleError, match="flows.parquet exists"):
        analyze_on_ray([str(caps)], str(tmp_path / "ray"), progress=False)


def test_analyze_on_the_cluster_from_the_command_line(cluster, tmp_path):
    caps = _captures(tmp_path)
    address = ray.get_runtime_context().gcs_address
    env = dict(os.environ, GENTLE_PYTHON=sys.executable)
    out = cli(["analyze", str(caps), "--parquet", str(tmp_path / "c"), "--address", address],
              env=env)
    assert out.returncode == 0, out.stderr
    assert "2 captures analysed (1 skipped)" in out.stdout, out.stdout
    local = cli(["analyze", str(caps), "--parquet", str(tmp_path / "local")])
    assert local.returncode == 0, local.stderr
    assert tree_bytes(tmp_path / "c") == tree_bytes(tmp_path / "local")
    # The report as JSON is the same document on Ray as on this machine.
    out = cli(["analyze", str(caps), "--json", "--address", address], env=env)
    assert out.returncode == 0, out.stderr
    local = cli(["analyze", str(caps), "--json"])
    assert local.returncode == 0, local.stderr
    assert out.stdout == local.stdout
    assert json.loads(out.stdout)["skipped"][0]["capture"].endswith(".pcap")
    # A missing capture is bad input, refused before any task.
    out = cli(["analyze", str(caps / "missing.pcap"), "--address", address], env=env)
    assert out.returncode == 2 and "missing.pcap" in out.stderr, out.stderr
