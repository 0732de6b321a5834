"""gentle.sweep and `gentle sweep` on the local backend: the tables, agreement with
the command line and with `gentle run --point`, determinism, resume and errors."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import gentle
from conftest import EXAMPLES, RECORD_COLUMNS, ROOT, SMALL_SWEEP, cli, gentle_bin, tree_bytes


def test_sweep_writes_a_record_file_per_point_and_the_summary_table(small_sweep, tmp_path):
    r = gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    files = sorted(p.name for p in (tmp_path / "s" / "records").iterdir())
    assert files == [f"point-{i:06}.parquet" for i in range(6)]
    pts = r.points
    assert list(pts.columns[:6]) == ["point", "network", "drops", "seed", "trials", "variant"]
    assert len(pts) == 6 * 3
    assert {"latency_ms.p50", "latency_ms.mean", "counters.TCPTimeouts", "samples"} <= set(pts.columns)
    assert list(pts["network"].unique()) == ["fast", "slow"]
    assert list(pts["drops"].unique()) == ["0", "1", "3"]
    assert set(pts.loc[pts["network"] == "slow", "trials"]) == {30}
    recs = r.records()
    assert list(recs.columns) == ["point", "network", "drops", *RECORD_COLUMNS]
    # The summary's sample sizes are the ranked records of each point and variant.
    ranked = recs[recs["ranked"]].groupby(["point", "variant"]).size()
    for _, row in pts.iterrows():
        assert ranked.get((row["point"], row["variant"]), 0) == row["samples"]
    # Drops show up where they were asked for.
    assert recs.loc[recs["drops"] == "0", "packets_dropped"].sum() == 0
    assert recs.loc[recs["drops"] == "3", "packets_dropped"].min() >= 3
    assert "small-sweep: 6 points" in r.text


def test_cli_and_python_write_the_same_files(small_sweep, tmp_path):
    gentle.sweep(small_sweep, tmp_path / "py", progress=False)
    out = cli(["sweep", str(small_sweep), "--out", str(tmp_path / "cli")])
    assert out.returncode == 0, out.stderr
    assert "small-sweep: 6 points (6 run now, 0 already written)" in out.stdout
    assert tree_bytes(tmp_path / "py") == tree_bytes(tmp_path / "cli")


def test_results_do_not_depend_on_threads_or_on_the_other_points(small_sweep, tmp_path):
    gentle.sweep(small_sweep, tmp_path / "t1", threads=1, progress=False)
    gentle.sweep(small_sweep, tmp_path / "t2", threads=2, progress=False)
    assert tree_bytes(tmp_path / "t1") == tree_bytes(tmp_path / "t2")
    # A point run alone is the same point as in the whole sweep.
    gentle.sweep(small_sweep, tmp_path / "one", point="network=slow,drops=1", progress=False)
    alone = (tmp_path / "one" / "records" / "point-000004.parquet").read_bytes()
    assert alone == (tmp_path / "t1" / "records" / "point-000004.parquet").read_bytes()


def test_a_point_matches_gentle_run_point(small_sweep, tmp_path):
    r = gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    out = cli(["run", str(small_sweep), "--point", "network=slow,drops=3", "--json"])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    pts = r.points
    for v in doc["variants"]:
        row = pts[(pts["network"] == "slow") & (pts["drops"] == "3") & (pts["variant"] == v["name"])]
        assert len(row) == 1
        assert row["latency_ms.p50"].iloc[0] == pytest.approx(v["latency_ms"]["p50"])
        assert row["counters.TCPTimeouts"].iloc[0] == v["counters"]["TCPTimeouts"]
        assert row["seed"].iloc[0] == doc["seed"]


def test_an_interrupted_sweep_resumes_to_the_same_results(tmp_path):
    # Enough trials that the sweep is still running when it is interrupted.
    scenario = tmp_path / "long.toml"
    scenario.write_text(SMALL_SWEEP.replace("trials = 40", "trials = 4000").replace("trials = 30", "trials = 3000"))
    whole = tmp_path / "whole"
    assert cli(["sweep", str(scenario), "--out", str(whole), "--threads", "1"]).returncode == 0
    part = tmp_path / "part"
    p = subprocess.Popen(
        [gentle_bin(), "sweep", str(scenario), "--out", str(part), "--threads", "1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list((part / "records").glob("point-*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert "--resume" in err
    written = list((part / "records").glob("point-*.parquet"))
    assert 1 <= len(written) < 6
    # Nothing half-written: every file there reads whole, and no summary yet.
    assert not list(part.rglob("*.tmp"))
    assert not (part / "points.parquet").exists()
    for f in written:
        pq.read_table(f)
    out = cli(["sweep", str(scenario), "--out", str(part), "--resume"])
    assert out.returncode == 0, out.stderr
    assert f"({6 - len(written)} run now, {len(written)} already written)" in out.stdout
    assert tree_bytes(part) == tree_bytes(whole)


def test_resume_refuses_another_sweeps_directory(small_sweep, tmp_path):
    gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    with pytest.raises(gentle.InputError, match="another sweep"):
        gentle.sweep(small_sweep, tmp_path / "s", seed=99, resume=True, progress=False)
    with pytest.raises(gentle.InputError, match="not empty"):
        gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    with pytest.raises(gentle.InputError, match="no sweep to resume"):
        gentle.sweep(small_sweep, tmp_path / "new", resume=True, progress=False)
    # --force replaces the earlier sweep's results.
    gentle.sweep(small_sweep, tmp_path / "s", seed=99, force=True, progress=False)
    assert set(gentle.SweepResult(tmp_path / "s", "").points["seed"]) != {11}


def test_sweep_errors(small_sweep, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL_SWEEP.replace("[0, 1, 3]", '[0, 1, "x"]'))
    with pytest.raises(gentle.ScenarioError) as e:
        gentle.sweep(bad, tmp_path / "o")
    assert e.value.file == str(bad) and e.value.line > 0 and e.value.exit_code == 2
    out = cli(["sweep", str(bad), "--out", str(tmp_path / "o2")])
    assert out.returncode == 2
    assert str(e.value).strip() == out.stderr.strip()
    assert not (tmp_path / "o2").exists()  # refused before anything was created
    with pytest.raises(gentle.InputError, match="no axis"):
        gentle.sweep(small_sweep, tmp_path / "o3", point="speed=1")
    with pytest.raises(gentle.InputError, match="backend"):
        gentle.sweep(small_sweep, tmp_path / "o4", backend="spark")
    with pytest.raises(gentle.InputError, match="choose one"):
        gentle.sweep(small_sweep, tmp_path / "o5", resume=True, force=True)
    with pytest.raises(gentle.InputError, match="trials=0"):
        gentle.sweep(small_sweep, tmp_path / "o6", trials=0)
    # An output path that is a file: bad input (exit 2), for both.
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    with pytest.raises(gentle.InputError, match="not a directory") as e:
        gentle.sweep(small_sweep, f)
    assert e.value.exit_code == 2
    assert cli(["sweep", str(small_sweep), "--out", str(f)]).returncode == 2
    assert f.read_text() == "mine"
    for o in ["o3", "o4", "o5", "o6"]:
        assert not (tmp_path / o).exists(), o


def test_records_of_a_sweep_name_their_columns(small_sweep, tmp_path):
    r = gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    df = r.records(columns=["point", "variant", "metric_ms"])
    assert list(df.columns) == ["point", "variant", "metric_ms"]
    with pytest.raises(gentle.InputError, match="no column 'nope'.*the columns: point") as e:
        r.records(columns=["nope"])
    assert e.value.exit_code == 2


def test_an_unreachable_ray_address_fails_at_once_and_writes_nothing(small_sweep, tmp_path):
    pytest.importorskip("ray")
    start = time.monotonic()
    with pytest.raises(gentle.RunError, match="cannot reach a Ray cluster at 127.0.0.1:1") as e:
        gentle.sweep(small_sweep, tmp_path / "o", address="127.0.0.1:1")
    assert e.value.exit_code == 1
    assert time.monotonic() - start < 10
    assert not (tmp_path / "o").exists()


def test_sweep_plot(small_sweep, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    r = gentle.sweep(small_sweep, tmp_path / "s", progress=False)
    fig = r.plot(x="drops", y="latency_ms.p50", panel="network")
    assert len(fig.axes) == 2
    assert all(len(ax.get_lines()) == 3 for ax in fig.axes)


def test_the_builtin_tlp_study_sweeps_quickly(tmp_path):
    r = gentle.sweep(EXAMPLES / "tlp-study.toml", tmp_path / "tlp", quick=True, progress=False)
    pts = r.points
    assert len(pts) == 3 * 21 * 3
    # Every point of the built-in sweep runs from the scenario's seed.
    assert set(pts["seed"]) == {1}
