"""``python -m gentle sweep FILE --out DIR [...]``, ``python -m gentle calibrate
FILE --targets FILE --out FILE [...]`` and ``python -m gentle analyze CAPTURE|DIR...
[--parquet DIR] [...]``: what the commands ``gentle sweep``, ``gentle calibrate``
and ``gentle analyze`` run for ``--backend ray`` (their flags are the same)."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import GentleError, ScenarioError, sweep


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gentle")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run every point of a scenario's [sweep]")
    s.add_argument("scenario")
    s.add_argument("--out", required=True)
    s.add_argument("--point")
    s.add_argument("--trials", type=int)
    s.add_argument("--seed", type=int)
    s.add_argument("--quick", action="store_true")
    s.add_argument("--resume", action="store_true")
    s.add_argument("--force", action="store_true")
    s.add_argument("--backend", choices=["local", "ray"], default="local")
    s.add_argument("--address")
    s.add_argument("--threads", type=int)
    c = sub.add_parser("calibrate", help="fit a scenario's free parameters on Ray")
    c.add_argument("scenario")
    c.add_argument("--targets", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--force", action="store_true")
    c.add_argument("--candidates", type=int)
    c.add_argument("--trials", type=int)
    c.add_argument("--seed", type=int)
    c.add_argument("--only", help="refit only these free parameters (comma-separated paths)")
    c.add_argument("--json", action="store_true")
    c.add_argument("--address")
    n = sub.add_parser("analyze", help="analyse many captures on Ray")
    n.add_argument("captures", nargs="+")
    n.add_argument("--parquet")
    n.add_argument("--force", action="store_true")
    n.add_argument("--slow", type=float)
    n.add_argument("--server")
    n.add_argument("--server-port", type=int)
    n.add_argument("--client-side", action="store_true")
    n.add_argument("--json", action="store_true")
    n.add_argument("--address")
    a = p.parse_args(argv)
    if a.cmd == "calibrate":
        return _calibrate(a)
    if a.cmd == "analyze":
        return _analyze(a)
    try:
        r = sweep(
            a.scenario,
            a.out,
            backend=a.backend,
            address=a.address,
            point=a.point,
            trials=a.trials,
            seed=a.seed,
            quick=a.quick,
            resume=a.resume,
            force=a.force,
            threads=a.threads,
        )
    except GentleError as e:
        return _failed(e)
    except KeyboardInterrupt:
        print(
            f"interrupted: the finished points are in {a.out}; `--resume` runs the rest",
            file=sys.stderr,
        )
        return 130
    print(r.text)
    return 0


def _failed(e: GentleError) -> int:
    """Prints the error as the command does (a scenario's error names its place
    itself) and returns its exit status."""
    print(e if isinstance(e, ScenarioError) else f"error: {e}", file=sys.stderr)
    return int(getattr(e, "exit_code", 1))


def _calibrate(a: argparse.Namespace) -> int:
    from ._ray import calibrate_on_ray, connect

    try:
        connect(a.address)
        return calibrate_on_ray(
            a.scenario,
            a.targets,
            a.out,
            force=a.force,
            candidates=a.candidates,
            trials=a.trials,
            seed=a.seed,
            only=a.only.split(",") if a.only else None,
            json=a.json,
        )
    except GentleError as e:
        return _failed(e)
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return 130


def _analyze(a: argparse.Namespace) -> int:
    from ._ray import analyze_on_ray, connect

    try:
        connect(a.address)
        report = analyze_on_ray(
            a.captures,
            a.parquet,
            force=a.force,
            slow=a.slow,
            server=a.server,
            server_port=a.server_port,
            client_side=a.client_side,
            json=a.json,
        )
    except GentleError as e:
        return _failed(e)
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        return 130
    print(report, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
