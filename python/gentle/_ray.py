"""The Ray backend of :func:`gentle.sweep`: points run as Ray tasks; and of
``gentle calibrate`` (candidates as tasks) and ``gentle analyze`` over many
captures (captures as tasks, :func:`analyze_on_ray`).

Ray schedules the tasks, moves their results through its object store and reruns
the task of a worker that dies (``max_retries``); gentle adds no scheduler of its
own. A task runs a chunk of consecutive points with :func:`gentle._gentle.run_points`
(on one thread: Ray gives each task one CPU) and returns each point's Parquet file,
which the driver writes into the sweep's directory as it arrives. The files are the
same bytes the local backend writes: a point's result depends on the scenario and
the point alone.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

#: Work per task, seconds at least. A task costs about 7 ms of a CPU beyond its
#: work on a local cluster of 2 CPUs (scheduling, the object store, the result's
#: bytes; measured by running one sweep in 8, 16 and 32 tasks), which this keeps
#: under 3% of the work. Larger tasks would leave CPUs idle at the end of small
#: sweeps.
TASK_SECONDS = 0.25
#: Tasks per CPU of the cluster, at least, when there are enough points, so that
#: every CPU stays busy until the end.
TASKS_PER_CPU = 4
#: Trials of every variant run once on the driver to measure a trial's cost.
CALIBRATION_TRIALS = 32
#: Runs of a task whose worker died, after the first.
MAX_RETRIES = 3
#: Fault injection for tests: when this environment variable names a file that does
#: not exist yet, the first task creates it and kills its own worker process.
FAULT_ONCE = "GENTLE_RAY_FAULT_ONCE"


def _run_chunk(spec: str, indices: List[int]) -> List[Tuple[int, bytes, float]]:
    """A task: runs points ``indices`` of the sweep ``spec`` on one thread."""
    fault = os.environ.get(FAULT_ONCE)
    if fault:
        try:
            fd = os.open(fault, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os._exit(1)  # the worker dies; Ray runs the task again
    from gentle import _gentle

    return _gentle.run_points(spec, indices, threads=1)


class _Progress:
    """A progress bar over points on a terminal (tqdm when installed)."""

    def __init__(self, total: int, name: str, show: bool, unit: str = "point") -> None:
        self.bar: Any = None
        self.total = total
        self.done = 0
        self.name = name
        self.unit = unit
        self.show = show and sys.stderr.isatty()
        if self.show:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=name, unit=unit)
            except ImportError:
                self.bar = None

    def advance(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.show:
            print(f"\r{self.name}: {self.done}/{self.total} {self.unit}s", end="", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.show:
            print(file=sys.stderr)


#: Seconds to wait for a Ray cluster's address to answer before giving up.
CONNECT_SECONDS = 5.0


def connect(address: Optional[str] = None) -> None:
    """Connects to Ray (the cluster at ``address``, the one ``ray.init()`` already
    joined, or a new local one). A ``host:port`` that does not answer is reported
    at once, before Ray spends its retries on it."""
    from . import _run_error

    try:
        import ray
    except ImportError:
        raise _run_error(
            "the Ray backend needs Ray: pip install 'ray>=2.9' (or ./python[ray])"
        ) from None
    if ray.is_initialized():
        return
    if address is not None and "://" not in address and address != "auto":
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host or "127.0.0.1", int(port)), CONNECT_SECONDS).close()
        except (OSError, ValueError) as e:
            raise _run_error(f"cannot reach a Ray cluster at {address}: {e}") from None
    try:
        if address is not None:
            ray.init(address=address)
        else:
            ray.init()
    except (ConnectionError, RuntimeError) as e:
        raise _run_error(f"cannot join a Ray cluster at {address or 'a new local one'}: {e}") from None


def run_on_ray(job: Any, progress: bool = True) -> str:
    """Runs the pending points of ``job`` (an opened ``SweepJob``) on the Ray
    cluster :func:`connect` joined; the report."""
    import ray

    start = time.monotonic()
    pending = job.pending()
    tasks = 0
    busy = 0.0
    if pending:
        resources = ray.cluster_resources()  # type: ignore[no-untyped-call,unused-ignore]
        cpus = max(1, int(resources.get("CPU", 1)))
        per_run = job.calibrate(pending[0], CALIBRATION_TRIALS)
        target = max(1, int(TASK_SECONDS / max(per_run, 1e-9)))
        chunks = job.chunks(pending, target, cpus * TASKS_PER_CPU)
        tasks = len(chunks)
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_chunk)
        spec = ray.put(job.spec())
        futures = [remote.remote(spec, c) for c in chunks]
        bar = _Progress(len(pending), job.name, progress)
        try:
            while futures:
                done, futures = ray.wait(futures, num_returns=1)
                for index, data, seconds in ray.get(done[0]):
                    job.commit(index, data)
                    busy += seconds
                    bar.advance()
        except KeyboardInterrupt:
            for f in futures:
                ray.cancel(f, force=True)
            raise
        finally:
            bar.close()
    wall = time.monotonic() - start
    report: str = job.finish(len(pending), wall)
    if tasks:
        report += (
            f"\nray: {tasks} tasks for {len(pending)} points, {busy:.1f} s of work in "
            f"{wall:.1f} s"
        )
    return report


def _measure(
    spec: Tuple[str, str, str, str, List[str]], values: List[float], trials: int, seed: int
) -> List[Optional[float]]:
    """A task: one candidate of a calibration, on one thread (``values`` of the
    free parameters ``only`` names, or of all of them when it is empty)."""
    from gentle import _gentle

    scenario, text, targets, targets_text, only = spec
    return _gentle.calibrate_measure(
        scenario, text, targets, targets_text, values, trials, seed, only=only
    )


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""  # the command reports the file before any candidate runs


def calibrate_on_ray(
    scenario: str,
    targets: str,
    out: str,
    *,
    force: bool = False,
    candidates: Optional[int] = None,
    trials: Optional[int] = None,
    seed: Optional[int] = None,
    only: Optional[List[str]] = None,
    json: bool = False,
) -> int:
    """``gentle calibrate`` with its candidates as Ray tasks on the cluster
    :func:`connect` joined: a generation's candidates at once, each a task of one
    CPU; ``only`` refits just the free parameters it names. Prints the command's
    report; returns its exit status."""
    import ray

    from gentle import _gentle

    # Workers need not share the driver's directory: paths are made absolute (a
    # scenario's base is read relative to it).
    scenario, targets = os.path.abspath(scenario), os.path.abspath(targets)
    only = list(only or [])
    spec = ray.put((scenario, _read(scenario), targets, _read(targets), only))
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_measure)

    def evaluate(values: List[float], trials: int, seed: int) -> List[Optional[float]]:
        result: List[Optional[float]] = ray.get(remote.remote(spec, values, trials, seed))
        return result

    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call,unused-ignore]
    code: int = _gentle.calibrate_command(
        scenario,
        targets,
        out,
        evaluate,
        cpus,
        force=force,
        candidates=candidates,
        trials=trials,
        seed=seed,
        only=only,
        json=json,
    )
    return code


def _analyze_chunk(
    paths: List[str],
    names: List[str],
    server: Optional[str],
    server_port: Optional[int],
    client_side: bool,
) -> List[bytes]:
    """A task: analyses captures ``paths`` (named ``names``) on one thread; each
    one's part of the tables, as bytes."""
    from gentle import _gentle

    return _gentle.analyze_parts(paths, names, server, server_port, client_side)


def analyze_on_ray(
    paths: List[str],
    parquet: Optional[str] = None,
    *,
    force: bool = False,
    slow: Optional[float] = None,
    server: Optional[str] = None,
    server_port: Optional[int] = None,
    client_side: bool = False,
    progress: bool = True,
    json: bool = False,
) -> str:
    """``gentle analyze CAPTURE|DIR... [--parquet DIR]`` with the captures analysed
    as Ray tasks on the cluster :func:`connect` joined (consecutive captures in each
    task, a few tasks per CPU). The parts are gathered here in path order, so the
    tables are the same bytes as the local backend's; the workers must be able to
    read the captures (a local cluster, or a file system they share). Returns the
    report (with ``json``, the JSON document ``gentle analyze --json`` prints)."""
    import ray

    from gentle import _gentle

    files = [str(f) for f in _gentle.analyze_plan(list(paths), parquet, force, slow)]
    start = time.monotonic()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call,unused-ignore]
    n = max(1, min(len(files), cpus * TASKS_PER_CPU))
    chunks = [files[i * len(files) // n : (i + 1) * len(files) // n] for i in range(n)]
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_analyze_chunk)
    # Workers need not share the driver's directory: they read absolute paths, and
    # the rows name each capture as the run was given it.
    futures = {
        remote.remote([os.path.abspath(f) for f in c], c, server, server_port, client_side): i
        for i, c in enumerate(chunks)
    }
    gather = _gentle.AnalyzeGather(parquet is not None)
    arrived: Dict[int, List[bytes]] = {}
    following = 0
    pending = list(futures)
    bar = _Progress(len(files), "analyze", progress, unit="capture")
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            i = futures[done[0]]
            arrived[i] = ray.get(done[0])
            for _ in chunks[i]:
                bar.advance()
            while following in arrived:
                for name, part in zip(chunks[following], arrived.pop(following)):
                    warning = gather.add(name, part)
                    if warning:
                        print(warning, file=sys.stderr)
                following += 1
    except KeyboardInterrupt:
        for f in pending:
            ray.cancel(f, force=True)
        raise
    finally:
        bar.close()
    wall = time.monotonic() - start
    report: str = gather.finish(parquet, slow, wall, f"Ray, {n} tasks on {cpus} CPUs", json)
    return report
