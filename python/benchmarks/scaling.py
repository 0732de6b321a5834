"""Benchmarks of sweeps and of the Python package, printed as a table:

1. Python's overhead on 100,000 trials: `gentle.run(records=False)` beside
   `gentle run --json`, and `gentle.run(...).records` (a DataFrame) beside
   `gentle run --json --out` (records.csv);
2. scaling: `gentle sweep` of the TLP study (63 points, `--trials` each) on one
   thread and on every core;
3. the Ray backend: the same sweep on a local Ray cluster of every core, beside
   `gentle sweep` on as many threads (the cost of Ray's tasks and object store),
   and a task's own cost (the sweep cut into 4 and into 16 tasks a CPU).

Each pair is measured alternately, `--runs` times, and the medians compared, so that
the machine's drift touches both sides alike.

Usage: python python/benchmarks/scaling.py [--trials N] [--runs K] [--no-ray]
(the gentle command from $GENTLE_BIN or target/release/gentle).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Tuple

import gentle

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "examples" / "tlp-study.toml"
RUN = ROOT / "examples" / "demo-tail-loss.toml"


def gentle_bin() -> str:
    return os.environ.get("GENTLE_BIN", str(ROOT / "target" / "release" / "gentle"))


def timed(f: Callable[[], None]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def pair(a: Callable[[], None], b: Callable[[], None], runs: int) -> Tuple[float, float]:
    """Medians of a and b, run alternately."""
    ta: List[float] = []
    tb: List[float] = []
    for _ in range(runs):
        ta.append(timed(a))
        tb.append(timed(b))
    return statistics.median(ta), statistics.median(tb)


def cli(*args: str) -> Callable[[], None]:
    def f() -> None:
        subprocess.run([gentle_bin(), *args], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=400, help="trials of every sweep point")
    p.add_argument("--runs", type=int, default=5, help="runs of each measurement (median)")
    p.add_argument("--no-ray", action="store_true")
    a = p.parse_args()
    cores = os.cpu_count() or 1
    tmp = Path(tempfile.mkdtemp())

    trials = 100_000
    rows = 0

    def py_records() -> None:
        nonlocal rows
        rows = len(gentle.run(RUN, trials=trials).records)

    def cli_out() -> None:
        shutil.rmtree(tmp / "run", ignore_errors=True)
        cli("run", str(RUN), "--trials", str(trials), "--json", "--out", str(tmp / "run"))()

    t_cli, t_py = pair(cli("run", str(RUN), "--trials", str(trials), "--json"),
                       lambda: gentle.run(RUN, trials=trials, records=False), a.runs)
    t_cli_out, t_py_rec = pair(cli_out, py_records, a.runs)
    print(f"demo-tail-loss, {trials} trials x 3 variants, median of {a.runs}")
    print(f"  summary only: gentle run --json {t_cli:.3f} s | gentle.run(records=False) "
          f"{t_py:.3f} s: {100 * (t_py / t_cli - 1):+.1f}%")
    print(f"  with records: gentle run --json --out {t_cli_out:.3f} s | gentle.run().records "
          f"({rows} rows) {t_py_rec:.3f} s: {100 * (t_py_rec / t_cli_out - 1):+.1f}%")

    def sweep(threads: int) -> Callable[[], None]:
        def f() -> None:
            out = tmp / f"cli-{threads}"
            shutil.rmtree(out, ignore_errors=True)
            cli("sweep", str(SWEEP), "--out", str(out), "--trials", str(a.trials),
                "--threads", str(threads))()
        return f

    one, many = pair(sweep(1), sweep(cores), a.runs)
    print(f"gentle sweep, tlp-study: 63 points x {a.trials} trials x 3 variants "
          f"({63 * a.trials * 3} trial runs), median of {a.runs}")
    print(f"  1 thread:  {one:6.2f} s")
    print(f"  {cores} threads: {many:6.2f} s   speed-up {one / many:.2f}x")

    if not a.no_ray:
        import ray

        ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
        ray.get(ray.remote(lambda: None).remote())  # workers up before timing
        report = ""

        def ray_sweep() -> None:
            nonlocal report
            out = tmp / "ray"
            shutil.rmtree(out, ignore_errors=True)
            report = gentle.sweep(SWEEP, out, trials=a.trials, backend="ray", progress=False).text

        t_local, t_ray = pair(sweep(cores), ray_sweep, a.runs)
        tasks = int(report.splitlines()[-1].split()[1])
        print(f"  Ray, {cores} CPUs: {t_ray:6.2f} s in {tasks} tasks, beside `gentle sweep "
              f"--threads {cores}` {t_local:.2f} s with Ray up: {100 * (t_ray / t_local - 1):+.1f}%")

        # A task's own cost: the same sweep cut into 4 and into 16 tasks a CPU (the
        # smallest task size lowered out of the way); the extra wall time, times the
        # CPUs, over the extra tasks.
        from gentle import _ray

        floor, per_cpu = _ray.TASK_SECONDS, _ray.TASKS_PER_CPU
        _ray.TASK_SECONDS = 0.02
        counts = {}

        def cut(n: int) -> Callable[[], None]:
            def f() -> None:
                _ray.TASKS_PER_CPU = n
                ray_sweep()
                counts[n] = int(report.splitlines()[-1].split()[1])
            return f

        few, many_t = pair(cut(4), cut(16), a.runs)
        _ray.TASK_SECONDS, _ray.TASKS_PER_CPU = floor, per_cpu
        ray.shutdown()
        cost = (many_t - few) * cores / (counts[16] - counts[4])
        print(f"  a task's cost: {counts[4]} tasks {few:.2f} s, {counts[16]} tasks {many_t:.2f} s: "
              f"{1000 * cost:.1f} ms of a CPU each, {100 * cost / floor:.1f}% of a "
              f"{floor} s task (the smallest the backend makes)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
