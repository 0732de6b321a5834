"""gentle from Python: TCP loss-recovery experiments, their records as DataFrames.

The functions here call gentle's Rust crates in-process (no subprocess). Runs
release the GIL; Ctrl-C stops a run between waves of trials and raises
``KeyboardInterrupt``.

>>> import gentle
>>> r = gentle.run("examples/demo-tail-loss.toml", trials=200)
>>> r.summary["variants"][0]["latency_ms"]["p50"]      # the --json document
>>> r.records.groupby("variant").metric_ms.describe()  # one row per exchange
>>> gentle.sweep("examples/tlp-study.toml", out="tlp", quick=True).points

Errors are :class:`GentleError` subclasses carrying the command-line message and
exit status: :class:`ScenarioError` (with ``file``, ``line`` and ``column``),
:class:`InputError` and :class:`RunError`.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _gentle
from ._gentle import GentleError, InputError, RunError, ScenarioError

__all__ = [
    "run",
    "reproduce",
    "experiments",
    "analyze",
    "sweep",
    "Result",
    "SweepResult",
    "Experiment",
    "GentleError",
    "ScenarioError",
    "InputError",
    "RunError",
]

__version__: str = _gentle.__version__

#: What a scenario can be: a path to a file, a built-in experiment's name, the
#: file's TOML text, or a mapping with the same keys as the file.
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _source(scenario: ScenarioLike) -> Tuple[str, str]:
    """The (file name for errors, TOML text) of a scenario argument."""
    if isinstance(scenario, Mapping):
        return "<dict>", _gentle.dict_to_toml(json.dumps(scenario))
    if isinstance(scenario, os.PathLike):
        path = Path(scenario)
        return str(path), _read(path)
    if not isinstance(scenario, str):
        raise TypeError(
            f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}"
        )
    if not scenario.strip():
        raise _input_error("scenario is empty: expected a path, a TOML string or a dict")
    if "\n" not in scenario and Path(scenario).exists():
        return scenario, _read(Path(scenario))
    if "\n" in scenario or "=" in scenario:
        return "<string>", scenario
    builtin = _gentle.builtin_scenario(scenario)
    if builtin is not None:
        return builtin
    if any(e.name == scenario for e in experiments()):
        raise _input_error(
            f"{scenario} is a built-in program, not a scenario: run it with "
            f"gentle.reproduce({scenario!r})"
        )
    raise _input_error(
        f"cannot read {scenario}: no such file (nor a built-in experiment of that name; "
        "see gentle.experiments())"
    )


def _input_error(message: str) -> InputError:
    """An InputError raised from Python, with the exit status of bad input."""
    err = InputError(message)
    err.exit_code = 2
    return err


def _run_error(message: str) -> RunError:
    """A RunError raised from Python, with the exit status of a failed run."""
    err = RunError(message)
    err.exit_code = 1
    return err


#: The largest trial count and seed the command line takes (``--trials``, ``--seed``).
_MAX_TRIALS = 1_000_000_000
_MAX_SEED = 2**64 - 1


def _whole(name: str, value: Optional[int], lo: int, hi: int) -> None:
    """Checks ``value`` is a whole number in [lo, hi] (None passes)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _input_error(f"{name}={value!r}: expected a whole number")
    if not lo <= value <= hi:
        raise _input_error(f"{name}={value}: expected {lo} to {hi}")


def _counts(trials: Optional[int], seed: Optional[int], threads: Optional[int]) -> None:
    _whole("trials", trials, 1, _MAX_TRIALS)
    _whole("seed", seed, 0, _MAX_SEED)
    _whole("threads", threads, 1, 4096)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise _input_error(f"cannot read {path}: {e.strerror or e}") from None


def _table(data: bytes) -> Any:
    """A Parquet file's bytes as a pandas DataFrame (an Arrow table without pandas)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(data))
    try:
        import pandas  # noqa: F401
    except ImportError:
        return table
    return table.to_pandas()


class Result:
    """The results of :func:`run`.

    Attributes:
        summary: the ``gentle run --json`` document: scenario, seed, trials and, per
            variant, latency quantiles (ms), counters and link drops.
        records: one row per exchange of every trial and variant (the columns of
            ``records.csv``, times in ms, ``ranked`` marking the exchanges in the
            latency sample), as a pandas DataFrame, or an Arrow table when pandas
            is not installed.
        text: the report ``gentle run`` prints.
    """

    def __init__(self, summary: Dict[str, Any], records: Optional[bytes], text: str) -> None:
        self.summary = summary
        self.text = text
        self._parquet = records
        self._records: Any = None

    @property
    def records(self) -> Any:
        """One row per exchange (decoded on first use from the Parquet table the run
        made); ``None`` when the run was asked for no records."""
        if self._records is None and self._parquet is not None:
            self._records = _table(self._parquet)
        return self._records

    @property
    def parquet(self) -> Optional[bytes]:
        """The records as a Parquet file's bytes (what :attr:`records` decodes)."""
        return self._parquet

    @property
    def counters(self) -> Dict[str, Dict[str, int]]:
        """Each variant's counters (Linux MIB names), by variant name."""
        return {v["name"]: dict(v["counters"]) for v in self.summary["variants"]}

    @property
    def latency_ms(self) -> Dict[str, Dict[str, float]]:
        """Each variant's latency quantiles and mean (ms), by variant name."""
        return {v["name"]: dict(v["latency_ms"]) for v in self.summary["variants"]}

    @property
    def ci95(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        """Each non-baseline variant's 95% confidence intervals of its differences
        from the baseline, by variant name: ``{"delta_ms": {"p50": {"lo": ..,
        "hi": ..}, ...}, "delta_pct": {...}, "method": ..., "resamples": ...,
        "trials": ...}`` (a paired bootstrap over trials; see the README)."""
        return {v["name"]: v["ci95"] for v in self.summary["variants"] if v.get("ci95")}

    def plot_cdf(self, ax: Any = None) -> Any:
        """The CDF of every variant's ranked times as a matplotlib Figure."""
        from .plots import cdf

        return cdf(self, ax=ax)

    def __repr__(self) -> str:
        names = ", ".join(v["name"] for v in self.summary["variants"])
        return (
            f"<gentle.Result {self.summary['scenario']!r}: {self.summary['trials']} trials, "
            f"variants {names}>"
        )

    def __str__(self) -> str:
        return self.text


def run(
    scenario: ScenarioLike,
    trials: Optional[int] = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    *,
    point: Optional[str] = None,
    quick: bool = False,
    records: bool = True,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    force: bool = False,
) -> Result:
    """Runs a scenario, as ``gentle run`` does, and returns its results.

    Args:
        scenario: a path to a scenario file, a built-in experiment's name, the
            file's TOML text, or a dict with the file's keys.
        trials: trials per variant (default: the scenario's).
        seed: the seed (default: the scenario's). Results are a pure function of
            scenario and seed, whatever ``threads`` is.
        threads: worker threads (default: all cores).
        point: for a scenario with a ``[sweep]``, the one point to run
            (``"network=mobile,drops=5"``); :func:`sweep` runs them all.
        quick: use the scenario's ``quick_trials``.
        records: keep every exchange's record (``Result.records``); without them
            a run costs what ``gentle run --json`` does.
        out: also write ``gentle run --out``'s files there (records.csv,
            summary.json, cdf.png, cdf.svg).
        force: replace the results gentle wrote in ``out`` before.

    Raises:
        ScenarioError: the scenario does not read (``file:line:column``).
        InputError: a bad argument, file or directory.
        RunError: the run went wrong (for example, corrupted delivery).
        KeyboardInterrupt: Ctrl-C.
    """
    _counts(trials, seed, threads)
    file, text = _source(scenario)
    summary, parquet, report = _gentle.run(
        text,
        file,
        point=point,
        seed=seed,
        trials=trials,
        quick=quick,
        threads=threads,
        records=records,
        out=None if out is None else os.fspath(out),
        force=force,
    )
    return Result(json.loads(summary), parquet, report)


class Experiment:
    """A built-in experiment: ``name``, one-line ``summary``, and ``kind``
    (``"scenario"``, a file :func:`run` takes, or ``"program"``, a paper's table)."""

    def __init__(self, name: str, summary: str, kind: str) -> None:
        self.name = name
        self.summary = summary
        self.kind = kind

    def __repr__(self) -> str:
        return f"<gentle.Experiment {self.name} ({self.kind}): {self.summary}>"


def experiments() -> List[Experiment]:
    """The built-in experiments, in ``gentle reproduce --list``'s order."""
    return [Experiment(n, s, k) for n, s, k in _gentle.experiments()]


def reproduce(
    name: str,
    quick: bool = False,
    *,
    threads: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    force: bool = False,
) -> Dict[str, Any]:
    """Runs a built-in experiment as ``gentle reproduce NAME`` does.

    Returns its JSON document (``--json``) with the printed report under
    ``"text"``. With ``out``, its files (tables, figures as PNG and SVG) are
    written there.

    Raises:
        InputError: no such experiment, or a bad argument or directory.
        RunError: the experiment went wrong.
        KeyboardInterrupt: Ctrl-C.
    """
    _counts(None, None, threads)
    text, doc = _gentle.reproduce(
        name,
        quick=quick,
        threads=threads,
        out=None if out is None else os.fspath(out),
        force=force,
    )
    result: Dict[str, Any] = json.loads(doc)
    result["text"] = text
    return result


def analyze(
    capture: Union[str, "os.PathLike[str]"],
    *,
    server: Optional[str] = None,
    server_port: Optional[int] = None,
    client_side: bool = False,
) -> Dict[str, Any]:
    """Analyses a pcap or pcapng capture as ``gentle analyze --json`` does: the
    flows, why each segment was retransmitted, signatures, exchanges and figures."""
    doc = _gentle.analyze(
        os.fspath(capture),
        server=server,
        server_port=server_port,
        client_side=client_side,
    )
    out: Dict[str, Any] = json.loads(doc)
    return out


class SweepResult:
    """A finished sweep's directory.

    Attributes:
        out: the directory.
        text: the report ``gentle sweep`` prints.
    """

    def __init__(self, out: Path, text: str) -> None:
        self.out = out
        self.text = text

    @property
    def points(self) -> Any:
        """One row per point and variant: coordinates, seed, trials and every
        number of the variant's summary (``latency_ms.p50``, ``counters.TCPTimeouts``...)."""
        import pyarrow.parquet as pq

        table = pq.read_table(self.out / "points.parquet")
        try:
            return table.to_pandas()
        except ImportError:
            return table

    def records(self, columns: Optional[List[str]] = None) -> Any:
        """Every point's records (one row per exchange, with the point's
        coordinates), read from ``out/records/``.

        Args:
            columns: the columns to read (all by default): ``point``, the sweep's
                axes (their labels, as strings), then the columns of
                :attr:`Result.records`.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        files = sorted((self.out / "records").glob("point-*.parquet"))
        if not files:
            raise _input_error(f"{self.out / 'records'}: no point's records")
        if columns is not None:
            have = pq.read_schema(files[0]).names
            unknown = [c for c in columns if c not in have]
            if unknown:
                raise _input_error(
                    f"no column {', '.join(map(repr, unknown))} in the records; "
                    f"the columns: {', '.join(have)}"
                )
        table = pa.concat_tables([pq.read_table(f, columns=columns) for f in files])
        try:
            return table.to_pandas()
        except ImportError:
            return table

    def plot(self, x: str, y: str = "latency_ms.p50", panel: Optional[str] = None) -> Any:
        """``y`` against axis ``x``, a line per variant (and a panel per value of
        axis ``panel``), as a matplotlib Figure."""
        from .plots import sweep_lines

        return sweep_lines(self, x=x, y=y, panel=panel)

    def __repr__(self) -> str:
        return f"<gentle.SweepResult {self.out}>"

    def __str__(self) -> str:
        return self.text


def sweep(
    scenario: ScenarioLike,
    out: Union[str, "os.PathLike[str]"],
    *,
    backend: str = "local",
    address: Optional[str] = None,
    point: Optional[str] = None,
    trials: Optional[int] = None,
    seed: Optional[int] = None,
    quick: bool = False,
    resume: bool = False,
    force: bool = False,
    threads: Optional[int] = None,
    progress: bool = True,
) -> SweepResult:
    """Runs every point of a scenario's ``[sweep]`` as ``gentle sweep`` does.

    Each point is an independent job with the seed its coordinates give it, so
    results do not depend on where or in which order points run: the local and
    the Ray backend write identical files. Results stream to ``out``: one Parquet
    file of records per point as it finishes (``out/records/``), then one table
    of summaries (``out/points.parquet``). Files are written whole; an
    interrupted sweep goes on with ``resume=True``.

    Args:
        scenario: a scenario with a ``[sweep]`` table, as for :func:`run` (a
            path, a built-in experiment's name, TOML text or a dict).
        out: the directory for the results (created; an earlier sweep's
            results there need ``resume`` or ``force``).
        backend: ``"local"`` (this machine's cores) or ``"ray"``: Ray tasks on the
            cluster ``ray.init()`` connected to, the one at ``address``, or a new
            local one.
        address: a Ray cluster's address, ``host:port`` (implies ``backend="ray"``).
        point: run only the points matching ``"axis=label,..."``.
        trials, seed, quick: as for :func:`run`, for every point.
        resume: run only the points ``out`` does not hold yet.
        force: replace an earlier sweep's results in ``out``.
        threads: worker threads of the local backend.
        progress: a progress bar over points (on a terminal).

    Returns:
        A :class:`SweepResult`: ``points`` (a table of summaries), ``records()``,
        ``plot()`` and the printed report.

    Raises:
        ScenarioError: the scenario does not read (``file:line:column``).
        InputError: a bad argument or directory (nothing is written).
        RunError: a point's run went wrong, a result could not be written, or
            the Ray cluster could not be reached.
        KeyboardInterrupt: Ctrl-C (the points written so far are kept).
    """
    if backend not in ("local", "ray"):
        raise _input_error(f"backend={backend!r}: expected 'local' or 'ray'")
    if resume and force:
        raise _input_error("resume=True and force=True: choose one")
    _counts(trials, seed, threads)
    file, text = _source(scenario)
    job = _gentle.SweepJob(text, file, point=point, seed=seed, trials=trials, quick=quick)
    out_path = Path(out)
    on_ray = backend == "ray" or address is not None
    if on_ray:
        from ._ray import connect

        connect(address)
    job.open(os.fspath(out_path), resume=resume, force=force)
    if on_ray:
        from ._ray import run_on_ray

        report = run_on_ray(job, progress=progress)
    else:
        report = job.run_local(threads=threads, progress=progress)
    return SweepResult(out_path, report)
