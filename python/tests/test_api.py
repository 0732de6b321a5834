"""gentle.run, reproduce, experiments, analyze: what they return, agreement with the
command line, errors, threads, Ctrl-C and the GIL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import gentle
from conftest import EXAMPLES, RECORD_COLUMNS, ROOT, cli

DEMO = EXAMPLES / "demo-tail-loss.toml"


def without_wall(doc: dict) -> dict:
    doc = dict(doc)
    doc.pop("wall_seconds", None)
    return doc


def test_run_returns_summary_records_and_counters():
    r = gentle.run(DEMO, trials=300, seed=5)
    assert r.summary["trials"] == 300 and r.summary["seed"] == 5
    names = [v["name"] for v in r.summary["variants"]]
    assert list(r.counters) == names
    assert all("TCPTimeouts" in c for c in r.counters.values())
    df = r.records
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == RECORD_COLUMNS
    assert str(df["trial"].dtype) == "int64"
    assert str(df["metric_ms"].dtype) == "float64"
    assert str(df["complete"].dtype) == "bool"
    assert set(df["variant"]) == set(names)
    assert sorted(df["trial"].unique()) == list(range(300))
    for v in r.summary["variants"]:
        ranked = df[(df["variant"] == v["name"]) & df["ranked"]]
        # The latency sample is exactly the ranked records.
        assert len(ranked) == v["samples"]
        assert ranked["metric_ms"].mean() == pytest.approx(v["latency_ms"]["mean"], rel=1e-9)
        assert ranked["metric_ms"].min() <= v["latency_ms"]["p50"] <= ranked["metric_ms"].max()


def test_every_difference_has_a_paired_confidence_interval():
    r = gentle.run(DEMO, trials=300, seed=5)
    names = [v["name"] for v in r.summary["variants"]]
    assert list(r.ci95) == names[1:], "every variant but the baseline"
    for name, ci in r.ci95.items():
        assert ci["resamples"] == 1000 and ci["trials"] == 300
        assert "paired bootstrap" in ci["method"]
        delta = next(v for v in r.summary["variants"] if v["name"] == name)["delta_ms"]
        for k in ["mean", "p25", "p50", "p90", "p99"]:
            lo, hi = ci["delta_ms"][k]["lo"], ci["delta_ms"][k]["hi"]
            assert lo <= delta[k] <= hi, (name, k, lo, delta[k], hi)
    # The same intervals as the command line's --json, for the same seed.
    out = cli(["run", str(DEMO), "--trials", "300", "--seed", "5", "--json"])
    doc = json.loads(out.stdout)
    assert [v["ci95"] for v in doc["variants"]] == [v["ci95"] for v in r.summary["variants"]]


def test_records_can_be_left_out():
    a = gentle.run(DEMO, trials=100, records=False)
    b = gentle.run(DEMO, trials=100)
    assert a.records is None and a.parquet is None
    assert without_wall(a.summary) == without_wall(b.summary)
    assert len(b.records) == sum(v["exchanges"] for v in b.summary["variants"])


def test_run_matches_the_command_line():
    r = gentle.run(DEMO, trials=200, seed=3)
    out = cli(["run", str(DEMO), "--trials", "200", "--seed", "3", "--json"])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert without_wall(r.summary) == without_wall(doc)


def test_run_writes_the_command_lines_files(tmp_path: Path):
    r = gentle.run(DEMO, trials=50, out=tmp_path / "o")
    files = sorted(p.name for p in (tmp_path / "o").iterdir() if not p.name.startswith("."))
    assert files == ["cdf.png", "cdf.svg", "records.csv", "summary.json"]
    csv = pd.read_csv(tmp_path / "o" / "records.csv")
    assert len(csv) == len(r.records)
    assert (csv["trial"].to_numpy() == r.records["trial"].to_numpy()).all()
    # A used directory is refused without force, like --out.
    with pytest.raises(gentle.InputError) as e:
        gentle.run(DEMO, trials=50, out=tmp_path / "o")
    assert e.value.exit_code == 2 and "not empty" in str(e.value)
    gentle.run(DEMO, trials=50, out=tmp_path / "o", force=True)


def test_scenario_as_text_dict_and_name_give_the_same_results():
    text = DEMO.read_text()
    a = gentle.run(DEMO, trials=100)
    b = gentle.run(text, trials=100)
    c = gentle.run("demo-tail-loss", trials=100)
    assert without_wall(a.summary) == without_wall(b.summary) == without_wall(c.summary)
    pd.testing.assert_frame_equal(a.records, b.records)
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        pytest.skip("tomllib needs Python 3.11")
    d = gentle.run(tomllib.loads(text), trials=100)
    assert without_wall(d.summary) == without_wall(a.summary)


def test_results_do_not_depend_on_threads():
    a = gentle.run(DEMO, trials=400, threads=1)
    b = gentle.run(DEMO, trials=400, threads=2)
    assert without_wall(a.summary) == without_wall(b.summary)
    pd.testing.assert_frame_equal(a.records, b.records)


def test_scenario_errors_carry_the_place_and_the_clis_message(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    text = DEMO.read_text().replace("trials = ", 'trials = "many" #', 1)
    bad.write_text(text)
    with pytest.raises(gentle.ScenarioError) as e:
        gentle.run(bad)
    err = e.value
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("trials = "))
    assert (err.file, err.line) == (str(bad), line)
    assert err.column == len('trials = ') + 1
    assert err.exit_code == 2
    assert isinstance(err, gentle.GentleError)
    out = cli(["run", str(bad)])
    assert out.returncode == 2
    assert str(err).strip() == out.stderr.strip()


def test_input_errors():
    with pytest.raises(gentle.InputError) as e:
        gentle.run("no/such/file.toml")
    assert e.value.exit_code == 2
    # Arguments are checked as the command line checks its flags, and named as
    # the API names them.
    for kwargs, message in [
        ({"trials": 0}, "trials=0: expected 1 to"),
        ({"trials": -1}, "trials=-1: expected 1 to"),
        ({"trials": 1.5}, "trials=1.5: expected a whole number"),
        ({"seed": -1}, "seed=-1: expected 0 to"),
        ({"seed": 2**64}, "seed=18446744073709551616: expected 0 to"),
        ({"threads": 0}, "threads=0"),
        ({"point": "network=moon"}, "point: .*moon"),
    ]:
        with pytest.raises(gentle.InputError, match=message) as e:
            gentle.run(EXAMPLES / "tlp-study.toml" if "point" in kwargs else DEMO, **kwargs)
        assert "--" not in str(e.value), e.value
        assert e.value.exit_code == 2
    with pytest.raises(gentle.InputError, match="scenario is empty"):
        gentle.run("")
    with pytest.raises(gentle.InputError, match=r"gentle.reproduce\('reactive-table1'\)"):
        gentle.run("reactive-table1")
    with pytest.raises(gentle.InputError, match=r"\[sweep\] of 63 points"):
        gentle.run(EXAMPLES / "tlp-study.toml")
    with pytest.raises(TypeError):
        gentle.run(42)  # type: ignore[arg-type]


def test_one_point_of_a_sweep():
    r = gentle.run(EXAMPLES / "tlp-study.toml", point="network=mobile,drops=3", quick=True)
    assert r.summary["point"] == {"network": "mobile", "drops": "3"}
    assert set(r.records["network"]) == {"mobile"}
    out = cli(["run", "examples/tlp-study.toml", "--point", "network=mobile,drops=3", "--quick", "--json"])
    assert out.returncode == 0, out.stderr
    assert without_wall(json.loads(out.stdout)) == without_wall(r.summary)


def test_experiments_and_reproduce(tmp_path: Path):
    ex = {e.name: e for e in gentle.experiments()}
    assert ex["demo-tail-loss"].kind == "scenario"
    assert ex["reactive-table1"].kind == "program"
    out = cli(["reproduce", "--list"])
    assert [l.split()[0] for l in out.stdout.splitlines() if l and not l[0].isspace()] == list(ex)
    doc = gentle.reproduce("reactive-table1", out=tmp_path / "t")
    assert doc["experiment"] == "reactive-table1" and doc["rows"]
    assert "Table 1" in doc["text"] or doc["text"].strip()
    assert (tmp_path / "t" / "reactive-table1.json").exists()
    cli_doc = json.loads(cli(["reproduce", "reactive-table1", "--json"]).stdout)
    assert cli_doc["rows"] == doc["rows"]
    with pytest.raises(gentle.InputError, match="no experiment named"):
        gentle.reproduce("no-such-experiment")


def test_analyze_agrees_with_the_command_line(tmp_path: Path):
    out = cli(["run", "examples/fast-retransmit.toml", "--pcap", "0", "--out", str(tmp_path / "o")])
    assert out.returncode == 0, out.stderr
    pcap = next((tmp_path / "o").glob("*.pcap"))
    doc = gentle.analyze(pcap)
    assert doc["flows"], doc
    ref = json.loads(cli(["analyze", str(pcap), "--json"]).stdout)
    assert doc == ref
    with pytest.raises(gentle.InputError):
        gentle.analyze(tmp_path / "missing.pcap")


def test_plot_cdf_is_a_figure_with_a_line_per_variant():
    import matplotlib

    matplotlib.use("Agg")
    r = gentle.run(DEMO, trials=100)
    fig = r.plot_cdf()
    lines = fig.axes[0].get_lines()
    assert len(lines) == len(r.summary["variants"])
    # Each line ends at 1: a CDF.
    assert all(abs(l.get_ydata()[-1] - 1.0) < 1e-12 for l in lines)


def test_the_gil_is_released_while_simulating():
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = time.monotonic()
    gentle.run(DEMO, trials=20000)
    elapsed = time.monotonic() - start
    done.set()
    t.join()
    # Another Python thread ran throughout: at least a tick per 5 ms of the run.
    assert elapsed > 0.2
    assert ticks > elapsed / 0.005


def test_ctrl_c_interrupts_a_run_cleanly():
    code = textwrap.dedent(
        """
        import faulthandler, signal, sys, gentle
        # Ctrl-C raises KeyboardInterrupt, as in any interactive session, even
        # when the suite runs as a background job (which starts with SIGINT ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        print("ready", flush=True)
        try:
            gentle.run("examples/demo-tail-loss.toml", trials=10**8)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(7)
        """
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Where it hangs, for the failure message: Python's stacks.
            p.send_signal(signal.SIGUSR1)
            time.sleep(2)
            p.kill()
            out, err = p.communicate()
            raise AssertionError(f"no exit 60 s after SIGINT; stderr:\n{err}") from None
    finally:
        p.kill()
    assert p.returncode == 7, (out, err)
    assert "interrupted" in out
