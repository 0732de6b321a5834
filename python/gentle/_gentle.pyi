"""Type hints of gentle's native module (Rust, built by maturin)."""

from typing import Callable, List, Optional, Tuple

from typing_extensions import Self, final

__all__ = [
    "GentleError",
    "ScenarioError",
    "InputError",
    "RunError",
    "SweepJob",
    "run",
    "reproduce",
    "experiments",
    "builtin_scenario",
    "analyze",
    "analyze_plan",
    "analyze_parts",
    "AnalyzeGather",
    "dict_to_toml",
    "run_points",
    "calibrate_command",
    "calibrate_measure",
    "__version__",
]

__version__: str

class GentleError(Exception):
    """A gentle error; ``exit_code`` is the status the command exits with."""

    exit_code: int

class ScenarioError(GentleError):
    """A scenario that does not read, at ``file:line:column`` (exit status 2)."""

    file: str
    line: int
    column: int
    message: str

class InputError(GentleError):
    """Bad input other than a scenario's text (exit status 2)."""

class RunError(GentleError):
    """A run that went wrong, or results that could not be written (exit status 1)."""

def run(
    text: str,
    file: str,
    point: Optional[str] = None,
    seed: Optional[int] = None,
    trials: Optional[int] = None,
    quick: bool = False,
    threads: Optional[int] = None,
    records: bool = True,
    out: Optional[str] = None,
    force: bool = False,
) -> Tuple[str, Optional[bytes], str]:
    """Runs a scenario: (summary JSON, records as Parquet bytes or None, report text)."""

def reproduce(
    name: str,
    quick: bool = False,
    threads: Optional[int] = None,
    out: Optional[str] = None,
    force: bool = False,
) -> Tuple[str, str]:
    """Runs a built-in experiment: (report text, JSON document)."""

def experiments() -> List[Tuple[str, str, str]]:
    """The built-in experiments: (name, summary, kind)."""

def builtin_scenario(name: str) -> Optional[Tuple[str, str]]:
    """A built-in scenario's (file, text), if ``name`` is one."""

def analyze(
    path: str,
    server: Optional[str] = None,
    server_port: Optional[int] = None,
    client_side: bool = False,
) -> str:
    """Analyses a capture: ``gentle analyze --json``'s document."""

def analyze_plan(
    paths: List[str],
    parquet: Optional[str] = None,
    force: bool = False,
    slow_ms: Optional[float] = None,
) -> List[str]:
    """Checks a many-capture ``gentle analyze`` before any work: the captures, in
    path order."""

def analyze_parts(
    paths: List[str],
    names: List[str],
    server: Optional[str] = None,
    server_port: Optional[int] = None,
    client_side: bool = False,
) -> List[bytes]:
    """Analyses captures (a task's share): each one's part of the tables, as bytes."""

@final
class AnalyzeGather:
    """The parts of a many-capture run, gathered in path order."""

    def __new__(cls, tables: bool) -> Self: ...
    def add(self, path: str, part: bytes) -> Optional[str]:
        """Adds the next capture's part; the warning to print if it was skipped."""
    def finish(
        self,
        parquet: Optional[str],
        slow_ms: Optional[float],
        seconds: float,
        ran_on: str,
        json: bool = False,
    ) -> str:
        """Writes the tables (if gathered); the report (with ``json``, as JSON)."""

def dict_to_toml(json: str) -> str:
    """A scenario's TOML text from a dict of the file's keys (as JSON text)."""

def run_points(
    spec: str, indices: List[int], threads: Optional[int] = None
) -> List[Tuple[int, bytes, float]]:
    """Runs points of a sweep (a worker's task): (index, Parquet bytes, seconds)."""

def calibrate_command(
    scenario: str,
    targets: str,
    out: str,
    evaluate: Callable[[List[float], int, int], List[Optional[float]]],
    concurrency: int,
    force: bool = False,
    candidates: Optional[int] = None,
    trials: Optional[int] = None,
    seed: Optional[int] = None,
    only: Optional[List[str]] = None,
    json: bool = False,
) -> int:
    """``gentle calibrate`` with candidates run by ``evaluate(values, trials, seed)``
    on ``concurrency`` threads (``only``: the free parameters refitted, all when
    empty); prints its report and returns its exit status."""

def calibrate_measure(
    scenario: str,
    text: str,
    targets: str,
    targets_text: str,
    values: List[float],
    trials: int,
    seed: int,
    only: Optional[List[str]] = None,
) -> List[Optional[float]]:
    """One candidate of a calibration (a worker's task): each target's statistic
    (``values`` of the free parameters ``only`` names; all when empty)."""

@final
class SweepJob:
    """A sweep: its points, where its results go, and how they run."""

    name: str
    axes: List[str]
    selected: List[int]
    def __new__(
        cls,
        text: str,
        file: str,
        point: Optional[str] = None,
        seed: Optional[int] = None,
        trials: Optional[int] = None,
        quick: bool = False,
    ) -> Self: ...
    def spec(self) -> str: ...
    def coords(self, i: int) -> List[Tuple[str, str]]: ...
    def work(self, i: int) -> int: ...
    def open(self, out: str, resume: bool = False, force: bool = False) -> None: ...
    def pending(self) -> List[int]: ...
    def done(self) -> int: ...
    def chunks(self, pending: List[int], target: int, min_tasks: int) -> List[List[int]]: ...
    def calibrate(self, i: int, trials: int) -> float: ...
    def commit(self, index: int, data: bytes) -> None: ...
    def run_local(self, threads: Optional[int] = None, progress: bool = True) -> str: ...
    def finish(self, ran: int, seconds: float) -> str: ...
